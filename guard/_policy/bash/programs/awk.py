"""awk and its kin: the program it runs, and the variables ``-v`` sets.

* **Runs.** The program (``-e``/``--source``, else the first operand) goes to the walk's
  allowlist of harmless awk; ``-f``/``--file`` from a stream asks; ``-v`` of a special
  variable (``ENVIRON``, ``PROCINFO`` …) asks; ``-l``/``--load``, ``-i``/``--include``,
  ``-E``/``--exec`` load code (gawk, mawk, nawk, awk).
* **Paths.** ``awk`` and ``gawk`` read what they name; the others' words are not known.
"""

from __future__ import annotations

import re

from guard._policy.bash.model import Command
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.code import inline, option_values, positionals, script_files

__all__ = ["AWK", "BUSYBOX_AWK", "MAWK"]


_READ = Use(read=True, write=False)
_LOADS = words("-l --load -i --include -E --exec")


def _runs(w: SyntaxWalker, command: Command) -> None:
    args = command.args
    sources = option_values(args, words("-e --source"))
    files = option_values(args, words("-f --file"))
    script_files(w, "awk", files)
    for word in option_values(args, words("-v --assign")):
        name = (word.value or "").split("=", 1)[0]
        if word.value is None or not re.fullmatch(r"[a-z_]\w*|[OI]?FS|[OR]S", name):
            w.finding("inline-code", "awk -v assigns a special variable: " + word.raw)
    if not sources and not files:
        positional = positionals(
            args, words("-F -v -f -e --source --assign --file --field-separator")
        )
        sources = positional[:1]
    inline(w, command, sources, "awk")


AWK = Card(
    names=words("awk gawk"),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
    runs=_runs,
    code_options=_LOADS,
    runs_files=True,
    long_options=words("--source --file --exec --include --load --assign"),
    abbreviates=True,
)
"""awk's card (and gawk's)."""

MAWK = Card(names=words("mawk nawk"), runs=_runs, code_options=_LOADS, runs_files=True)
"""mawk and nawk: their program is read, their paths are not known."""

BUSYBOX_AWK = Card(names=words("busybox-awk"), runs=_runs, runs_files=True)
"""busybox's awk by its own name."""
