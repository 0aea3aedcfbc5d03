"""sed: the script it runs, and the files ``-i`` edits in place.

* **Runs.** The script (``-e``/``--expression``, else the first operand) goes to the walk's
  allowlist of harmless sed; ``-f``/``--file`` from a stream asks.
* **Paths.** With ``-i``/``--in-place`` the operands after the script are changed (the
  first is the script unless ``-e``/``-f``/``-E`` gives it); without, sed is read like a
  program nothing is known of. ``gsed`` runs the same way; its paths are not known.
"""

from __future__ import annotations

from guard._policy.bash.model import Command
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import UNKNOWN, Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.code import inline, option_values, positionals, script_files

__all__ = ["GSED", "SED"]

_LONG = words("--in-place --expression --file --line-length --separate --sandbox")
# No short options: a cluster stays as typed. Read so, ``sed -nf FILE`` takes FILE for its
# script, which asks; split, it would be the allowed ``sed -n -f FILE``: only stricter.


def _runs(w: SyntaxWalker, command: Command) -> None:
    args = command.args
    scripts = option_values(args, words("-e --expression"))
    files = option_values(args, words("-f --file"))
    script_files(w, "sed", files)
    has_file = bool(files)
    if not scripts and not has_file:
        positional = positionals(args, words("-e --expression -f --file -l --line-length"))
        scripts = positional[:1]
    inline(w, command, scripts, "sed")


SED = Card(
    names=words("sed"),
    paths=Shape(
        short_values="efl",
        long_values=words("--expression --file --line-length"),
        operands=Use(read=True, write=True, target=True),
        first_unless=("-e", "--expression", "-f", "--file", "-E"),
        only_with=("-i", "--in-place"),
        otherwise=UNKNOWN,
    ),
    runs=_runs,
    runs_files=True,
    long_options=_LONG,
    abbreviates=True,
)
"""sed's card."""

GSED = Card(
    names=words("gsed"),
    runs=_runs,
    runs_files=True,
    long_options=_LONG,
    abbreviates=True,
)
"""GNU sed by its other name: its script is read, its paths are not known."""
