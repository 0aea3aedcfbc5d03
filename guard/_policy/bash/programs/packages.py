"""Package managers: where they install, and the options before their subcommand.

* **Paths.** ``npm``, ``pnpm`` and ``yarn`` read what they name; where they install
  (``npm --prefix DIR``, ``pnpm --dir``/``-C DIR``, ``yarn --cwd DIR``/``--modules-folder
  DIR``) is written, recursively. ``pip``, ``apt``, ``conda`` are read like a program
  nothing is known of.
* **Subcommand.** ``npm -w WS install``, ``apt-get -o OPT remove``, ``pip --python P
  uninstall``, ``conda -n ENV remove``: a rule's ``subcommand`` skips these values.

What ``npm exec``, ``pnpm dlx``, ``conda run`` … run is the wrappers' knowledge
(``running/wrappers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import option_value
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.wrappers import runner

__all__ = ["APT", "CONDA", "NPM", "PIP", "PNPM", "YARN"]


_READ = Use(read=True, write=False)
_READER = Shape(operands=_READ, values=_READ, assignments=True)


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """Where a package manager installs: ``npm --prefix DIR``, ``pnpm --dir``/``-C DIR``,
    ``yarn --cwd DIR``/``--modules-folder DIR`` are written (recursively)."""
    names = ("--prefix", "--dir", "-C", "--cwd", "--modules-folder", "--global-folder")
    written = Use(read=True, write=True, target=True, recursive=True)
    return [(word, written) for word in option_value(command.args, *names)]


_INSTALLS = replace(_READER, reader=_paths)

NPM = Card(
    names=words("npm"),
    paths=_INSTALLS,
    global_options=words("--prefix -w --workspace -C"),
    wraps=runner("exec x", "w", "--workspace --package --prefix"),
)
"""npm's card."""

PNPM = Card(
    names=words("pnpm"),
    paths=_INSTALLS,
    global_options=words("-C --dir --filter -F"),
    wraps=runner("exec dlx", "C", "--dir --filter"),
)
"""pnpm's card."""

YARN = Card(
    names=words("yarn"),
    paths=_INSTALLS,
    global_options=words("--cwd"),
    wraps=runner("exec dlx"),
)
"""yarn's card."""

PIP = Card(names=words("pip pip3"), global_options=words("--python --log --cache-dir"))
"""pip's card: only the options before its subcommand are known."""

APT = Card(
    names=words("apt apt-get"),
    global_options=words("-o -t -c --option --target-release --config-file"),
)
"""apt's card: only the options before its subcommand are known."""

CONDA = Card(
    names=words("conda"),
    global_options=words("-n --name -p --prefix"),
    wraps=runner("run", "np", "--name --prefix --cwd"),
)
"""conda's card: only the options before its subcommand are known."""
