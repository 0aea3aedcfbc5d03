"""The path readers shared by programs without a card: ``Use`` and the ``Reader`` shape.

``Use`` says how a command uses a path it names; a ``Reader`` returns the words of a command
that name paths with how they are used, in the order the command names them, for programs
whose arguments no ``Shape`` row can say. The readers of ``dd``, ``find``,
``curl``/``wget``, ``tar``/``zip`` and ``git`` are in their cards (``bash/programs/``);
here remain where package managers install (``package_prefix``) and container volumes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import option_value

__all__ = ["Reader", "Touches", "Use", "container_volumes", "package_prefix"]


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


def package_prefix(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """Where a package manager installs: ``npm --prefix DIR``, ``pnpm --dir``/``-C DIR``,
    ``yarn --cwd DIR``/``--modules-folder DIR`` are written (recursively)."""
    names = ("--prefix", "--dir", "-C", "--cwd", "--modules-folder", "--global-folder")
    written = Use(read=True, write=True, target=True, recursive=True)
    return [(word, written) for word in option_value(command.args, *names)]


def container_volumes(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """The host side of ``-v``/``--volume``/``--mount``, when it is a path."""
    out: Touches = []
    for word in option_value(command.args, "-v", "--volume", "--mount"):
        source: str | None = word.value
        if source is not None and "=" in source:
            fields = dict(f.split("=", 1) for f in source.split(",") if "=" in f)
            source = fields.get("source", fields.get("src", ""))
        elif source is not None:
            source = source.split(":", 1)[0]
        if source is None or source.startswith(("/", ".", "~")):
            out.append((Word(source, word.raw), Use(True, True, target=True, recursive=True)))
    return out
