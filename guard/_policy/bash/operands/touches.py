"""Which words of a simple command name paths, and how it uses each: one table per program.

A :class:`Shape` holds what the analysis knows of a program's arguments: the options that
take a value, how its operands are used (read, written, the target of a change,
recursively), whether the first operand is a pattern or a mode rather than a path, where
its destination is, which flags make it recursive. ``read_paths`` reads a command through
the shape its program's card gives (``bash/programs``); ``SHAPES`` holds the rows of the
programs that have no card yet (the shells and python). A program with neither is
read fail-closed (``UNKNOWN``): every operand and option value counts as read *and*
written. The few programs whose arguments are not regular name a reader of their own in
their card's shape.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import has_flag, option_value, split_args
from guard._policy.bash.operands.irregular import Reader, Use

__all__ = ["SHAPES", "UNKNOWN", "Shape", "Use", "read_paths"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class Shape:
    """How one program's arguments name paths (see the module docstring)."""

    short_values: str = ""
    """Short options that take a value (their value is not an operand)."""
    long_values: frozenset[str] = frozenset()
    """Long options that take a value as the next word."""
    operands: Use | None = None
    """How the operands are used; ``None``: they are not paths."""
    static_args: bool = False
    """Every argument known before running is an operand, flags included (``echo``)."""
    first_unless: tuple[str, ...] | None = None
    """The first operand is not a path (a pattern, a mode) unless one of these flags is set."""
    recursive: tuple[str, ...] = ()
    """Flags that make the operands (and the destination) recursive."""
    always_recursive: bool = False
    destination: Use | None = None
    """The last operand, or the value of ``-t``/``--target-directory``, is the destination."""
    splits_destination: bool = False
    """Recursively (``cp -r``, ``mv``), the destination itself and, beneath it, what each
    operand becomes there (``mv notes.md /tmp/`` writes ``/tmp`` and ``/tmp/notes.md``, never
    all of ``/tmp``). A word the shell expands, ``-T`` (the operand's content lands in the
    destination itself) or a program without this (``rsync --delete``) write all of it."""
    values: Use | None = None
    """How every option value is used; ``None``: they are not paths."""
    assignments: bool = False
    """``KEY=PATH`` operands name ``PATH`` as well, used as the operands are."""
    only_with: tuple[str, ...] = ()
    """The row holds only with one of these flags (``sed -i``); otherwise ``otherwise`` does."""
    otherwise: Shape | None = None
    reader: Reader | None = None
    """Reads what the row cannot say, before the row's operands and values."""


_TARGET_DIRECTORY = ("-t", "--target-directory")

_WRITTEN = Use(read=True, write=True)
_READ = Use(read=True, write=False)
UNKNOWN = Shape(operands=_WRITTEN, values=_WRITTEN, assignments=True)
"""A program nothing is known of: every operand, option value and ``KEY=PATH`` read and written."""
_READER = Shape(operands=_READ, values=_READ, assignments=True)

# Options that take a value, per program: (short letters, long options).
_VALUE_OPTIONS: Mapping[str, tuple[str, frozenset[str]]] = {}

# Families in the order they are decided: a program named by two takes the first.
_FAMILIES: tuple[tuple[frozenset[str], Shape], ...] = (
    (_set("python python3 bash sh zsh"), _READER),
)


def _table(families: Iterable[tuple[frozenset[str], Shape]]) -> dict[str, Shape]:
    table: dict[str, Shape] = {}
    for programs, shape in families:
        for program in sorted(programs - table.keys()):
            short, long = _VALUE_OPTIONS.get(program, ("", frozenset()))
            table[program] = replace(shape, short_values=short, long_values=long)
    return table


SHAPES: Mapping[str, Shape] = _table(_FAMILIES)
"""Every program the analysis knows the path arguments of; the rest are read as unknown."""

_UNSEEN = _set("/dev/null /dev/stdout /dev/stderr /dev/tty")


_PLAIN = re.compile(r"[^*?\[\]{}~$`]+")
"""A path word the shell does not expand: only those split a destination (else all of it)."""


def _destination(
    word: Word, sources: Sequence[Word], use: Use, recursive: bool
) -> list[tuple[Word, Use]]:
    """The destination ``word`` of a copy or move of ``sources`` (see
    ``Shape.splits_destination``; no sources: all of it)."""
    if not recursive:
        return [(word, use)]
    names = [posixpath.basename((s.value or "").rstrip("/")) for s in sources]
    dest = word.value
    if (
        dest is None
        or not sources
        or any(v is None or not _PLAIN.fullmatch(v) for v in (dest, *(s.value for s in sources)))
        or any(n in ("", ".", "..") for n in names)
    ):
        return [(word, replace(use, recursive=True))]
    whole = replace(use, recursive=True, target=False)  # written there, named by its source
    return [(word, use)] + [(Word(posixpath.join(dest, name), word.raw), whole) for name in names]


def read_paths(command: Command, shape: Shape) -> list[tuple[Word, Use]]:
    """Every word of ``command`` that names a path, with how the command uses it, in order,
    its arguments read through ``shape`` (what its program's card says)."""
    out: list[tuple[Word, Use]] = [
        (word, Use(read=False, write=True, target=True))
        for word in command.redirect_writes
        if word.value not in _UNSEEN
    ]
    out += [(word, _READ) for word in (*command.redirect_reads, *command.named)]
    out += [(Word.literal(text), _WRITTEN) for text in command.code_strings]
    if command.program is None:
        return out + [(word, _WRITTEN) for word in command.args]
    args = command.args
    flags, values, positionals = split_args(args, shape.short_values, shape.long_values)
    if shape.only_with and not has_flag(flags, *shape.only_with):
        shape = shape.otherwise or UNKNOWN
    if shape.reader is not None:
        out += shape.reader(command, flags, values, positionals)
    if shape.operands is None:
        return out
    operands = [w for w in args if w.value is not None] if shape.static_args else positionals
    if shape.first_unless is not None and not has_flag(flags, *shape.first_unless):
        operands = operands[1:]
    destinations: list[Word] = []
    if shape.destination is not None:
        named = option_value(args, *_TARGET_DIRECTORY)
        destinations = named or operands[-1:]
        operands = operands if named else operands[:-1]
    recursive = shape.always_recursive or has_flag(flags, *shape.recursive)
    use = replace(shape.operands, recursive=True) if recursive else shape.operands
    out += [(word, use) for word in operands]
    if shape.destination is not None:
        split = shape.splits_destination and not has_flag(flags, "-T", "--no-target-directory")
        for word in destinations:
            out += _destination(word, operands if split else [], shape.destination, recursive)
    if shape.values is not None:
        out += [(word, shape.values) for word in values]
    if shape.assignments:
        for word in positionals:
            key, sep, rest = (word.value or "").partition("=")
            if sep and key.isidentifier():
                out.append((Word(rest, word.raw), use))
    return out
