"""find: its start points, what it deletes, and the commands it runs.

* **Paths.** The words before the first expression (``-name``, ``(``, ``!``) are its start
  points, read; changed recursively when it deletes (``-delete``, or ``-exec``/``-execdir``/
  ``-ok``/``-okdir`` of a deleting program or of one only known at runtime).
* **Runs.** ``-exec``/``-execdir``/``-ok``/``-okdir`` run a command on every file found: it
  asks, and the command is walked (``{}`` is a word only known at runtime);
  ``-fprint``/``-fprint0``/``-fprintf``/``-fls`` write a file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.deleters import DELETERS

__all__ = ["CARD"]


def _runs(w: SyntaxWalker, command: Command) -> None:
    args = list(command.args)
    i = 0
    while i < len(args):
        value = args[i].value
        if value in ("-exec", "-execdir", "-ok", "-okdir"):
            w.finding("find-exec", f"find {value} runs a command on every file it finds")
            j = i + 1
            while j < len(args) and args[j].value not in (";", "+"):
                j += 1
            inner = [Word(None, "{}") if a.value == "{}" else a for a in args[i + 1 : j]]
            if inner:
                w.run(inner, via=(*command.via, f"find {value}"), producers=[], texts=[])
            i = j + 1
            continue
        if value in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            w.finding("find-exec", f"find {value} writes a file")
        i += 1


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """The start points, changed recursively when ``find`` deletes (``-delete``, ``-exec rm``)."""
    args = command.args
    destructive = any(w.value == "-delete" for w in args) or any(
        w.value in ("-exec", "-execdir", "-ok", "-okdir") and _deletes(args[i + 1 : i + 2])
        for i, w in enumerate(args)
    )
    use = Use(read=True, write=destructive, target=destructive, recursive=destructive)
    out: Touches = []
    for word in args:
        head = word.value or ""
        if head.startswith(("-", "(", "!")) or head == ")":
            break
        out.append((word, use))
    return out


def _deletes(words: Sequence[Word]) -> bool:
    """Whether the command starting at ``words`` (``find -exec …``) may delete files."""
    if not words:
        return False
    value = words[0].value
    return value is None or os.path.basename(value) in DELETERS


CARD = Card(names=words("find"), paths=Shape(reader=_paths), runs=_runs, catastrophic=True)
"""find's card."""
