"""The shape of a card: what the guard knows about one program (or a family of programs).

A card says what a program runs that the command does not show (``runs``: findings, nested
scripts, the command it runs in turn; ``code_options``: options that carry code), which of
its words name paths and how it uses each (``paths``: read, written, destroyed,
recursively), and which options may come before its subcommand (``global_options``, so a
rule's ``subcommand`` finds ``git -C dir reset``).
A program without a card is read as it always was: fail closed, every operand read and
written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from guard._policy.bash.model import Command
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker

__all__ = ["Card", "Runs"]

Runs = Callable[[SyntaxWalker, Command], None]
"""Looks at one command of the program: findings for what it runs, nested code walked."""


@dataclass(frozen=True, slots=True)
class Card:
    """What the guard knows about the programs ``names`` (see the module docstring)."""

    names: frozenset[str]
    """The program's names: the basename of the command word (``git``, ``/usr/bin/git``)."""
    paths: Shape | None = None
    """Which words name paths and how each is used; ``None``: every operand read and written."""
    runs: Runs | None = None
    """What the program runs or writes that its words do not name; ``None``: nothing."""
    code_options: frozenset[str] = frozenset()
    """Options whose value (or presence) is code or a program it runs (``rsync -e``): asks."""
    global_options: frozenset[str] = frozenset()
    """Options taking a value that may come before the subcommand (``git -C DIR reset``)."""
