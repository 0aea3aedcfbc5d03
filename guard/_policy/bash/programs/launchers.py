"""Programs that start another program an option names: gdb, sort, split, man, less.

``gdb -ex``/``-x``, ``sort --compress-program``, ``split --filter``, ``man -P``/``-H``,
``less -o``/``-O`` (a log file it writes) each ask. ``man`` and ``less`` read what they
name; the others' paths are not known.
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, Wraps, words

__all__ = ["GDB", "LESS", "MAN", "SORT", "SPLIT"]

_READ = Use(read=True, write=False)
_READER = Shape(operands=_READ, values=_READ, assignments=True)

GDB = Card(
    names=words("gdb"),
    code_options=words("-ex --eval-command -x --command -iex -ix"),
    wraps=Wraps(how="asks"),
)
"""gdb's card; gdb also runs a program, so it asks first as a wrapper that asks."""

SORT = Card(names=words("sort"), code_options=words("--compress-program"))
"""sort's card."""

SPLIT = Card(names=words("split"), code_options=words("--filter"))
"""split's card."""

MAN = Card(names=words("man"), paths=_READER, code_options=words("-P --pager -H --html"))
"""man's card."""

LESS = Card(names=words("less"), paths=_READER, code_options=words("-o --log-file -O --LOG-FILE"))
"""less's card."""
