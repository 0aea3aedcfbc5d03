"""What the bash analysis produces: words, simple commands, findings, and small text helpers."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_DEPTH",
    "Command",
    "Finding",
    "Script",
    "Word",
    "join_raw",
    "preview",
    "program_name",
]

MAX_DEPTH = 8
"""How deep ``bash -c '…'`` strings (and other nested scripts) are parsed; beyond: confirm."""


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: ``value`` after quote removal, ``None`` when only known at runtime."""

    value: str | None
    raw: str
    glob: bool = False
    inner: tuple[Command, ...] = ()

    @staticmethod
    def literal(text: str) -> Word:
        return Word(text, text)


@dataclass(slots=True)
class Command:
    """A simple command after unwrapping; ``argv`` is empty for a bare redirection."""

    argv: tuple[Word, ...]
    cwd: str
    via: tuple[str, ...] = ()
    producers: list[Command] = field(default_factory=list)
    stdin_texts: list[str] = field(default_factory=list)
    redirect_writes: list[Word] = field(default_factory=list)
    redirect_reads: list[Word] = field(default_factory=list)
    named: list[Word] = field(default_factory=list)
    code_strings: tuple[str, ...] = ()
    program: str | None = field(init=False, default=None)
    leading: tuple[tuple[Word, ...], bool] | None = field(init=False, default=None)
    """Cache for rule matching: positionals after global options, and whether that is ambiguous."""

    def __post_init__(self) -> None:
        self.program = program_name(self.argv[0]) if self.argv else None

    @property
    def args(self) -> tuple[Word, ...]:
        return self.argv[1:]


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the static analysis flags by itself (a built-in check id and a detail)."""

    check: str
    detail: str
    targets: tuple[str, ...] = ()


@dataclass(slots=True)
class Script:
    commands: list[Command]
    findings: list[Finding]


def program_name(word: Word) -> str | None:
    """The basename of a static command word (``/usr/bin/rm`` -> ``rm``)."""
    if word.value is None:
        return None
    return posixpath.basename(word.value.rstrip("/")) or word.value


def preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def join_raw(argv: Sequence[Word]) -> str:
    return " ".join(w.raw for w in argv)
