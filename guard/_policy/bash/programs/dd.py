"""dd: ``of=FILE`` is overwritten, ``if=FILE`` read; its other words are no paths."""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["CARD"]

_READ = Use(read=True, write=False)
_CHANGED = Use(read=False, write=True, target=True)


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """``of=FILE`` is written, ``if=FILE`` read."""
    out: Touches = []
    for word in command.args:
        value = word.value or ""
        if value.startswith("of="):
            out.append((Word(value[3:], word.raw), _CHANGED))
        elif value.startswith("if="):
            out.append((Word(value[3:], word.raw), _READ))
    return out


CARD = Card(names=words("dd"), paths=Shape(reader=_paths))
"""dd's card."""
