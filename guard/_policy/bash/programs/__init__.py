"""One card per program: what the guard knows about a program, in one place.

A card (``card``) says what a program runs, which of its words are paths and how it uses
each (read, written, destroyed), its irregular forms and the options before its subcommand;
``registry`` maps a program's names to its card; ``code`` reads the code a program carries;
``spelling`` reads a command's words in the full spelling its card says.
One module per program or family: ``git``, ``find``, ``sed``, ``awk``, ``make``, ``dd``,
``sql`` (psql, sqlite3 …), ``downloaders`` (curl, wget), ``deleters`` (rm …), ``copy``
(mv, cp …), ``writers`` (tee, chmod …), ``search`` (grep, rg …), ``archives`` (tar …),
``packages`` (npm, pip …), ``containers`` (docker, kubectl …), ``clouds`` (aws …),
``editors`` (vim, emacs), ``languages`` (Rscript, julia …), ``launchers`` (gdb, less …),
``readers`` (cat, ls, jq …), ``wrappers`` (sudo, env, xargs, uv …), ``builtins`` (the
shell's, echo/printf, perl), ``interpreters`` (node, ruby, php …).
Cards stand on ``model``, ``operands/`` (how arguments are read) and ``parsing/`` (the walk
a program's code is handed to); ``running/`` and the path matching ask them.
"""

from guard._policy.bash.programs.card import Card, Runs, Wraps
from guard._policy.bash.programs.registry import (
    CARDS,
    card_for,
    global_options_of,
    paths_of,
    touched,
)
from guard._policy.bash.programs.spelling import abbreviates

__all__ = [
    "CARDS",
    "Card",
    "Runs",
    "Wraps",
    "abbreviates",
    "card_for",
    "global_options_of",
    "paths_of",
    "touched",
]
