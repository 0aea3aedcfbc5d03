"""How a command uses a path it names (``Use``), and the shape of a reader (``Reader``).

A ``Reader`` returns the words of a command that name paths with how they are used, in the
order the command names them, for a program whose arguments no ``Shape`` can say; every
reader is in its program's card (``bash/programs/``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guard._policy.bash.model import Command, Word

__all__ = ["Reader", "Touches", "Use"]


@dataclass(frozen=True, slots=True)
class Use:
    """How a command uses a path it names."""

    read: bool
    write: bool
    target: bool = False
    """The path is what the command changes (shown to the operator as its target)."""
    recursive: bool = False


Touches = list[tuple[Word, Use]]
Reader = Callable[[Command, Sequence[Word], Sequence[Word], Sequence[Word]], Touches]
"""(command, flags, option values, operands) -> the words naming paths, with their use."""
