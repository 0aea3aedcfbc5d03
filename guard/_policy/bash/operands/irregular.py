"""The programs whose path arguments no row of ``touches.SHAPES`` can say, read one by one.

``dd`` (``if=``/``of=``), ``find`` (its start points, destructive with ``-delete`` or a
deleting ``-exec``), ``curl``/``wget`` (output files and the names taken from URLs),
``tar``/``zip`` (archive, members, ``-C``) and container volumes (git's reader is in its
card, ``bash/programs/git``). Each is a ``Reader``: it returns the words that name paths with
how they are used, in the order the command names them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import bundled_values, has_flag, option_value

__all__ = [
    "DELETERS",
    "Reader",
    "Touches",
    "Use",
    "archive",
    "container_volumes",
    "dd",
    "download",
    "find",
]


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

DELETERS = frozenset(
    ["rm", "unlink", "shred", "srm", "rmdir", "trash", "trash-put", "rimraf", "truncate", "del"]
)
"""Programs that delete or overwrite their operands."""

_READ = Use(read=True, write=False)
_CHANGED = Use(read=False, write=True, target=True)
_CURL_VALUE_LETTERS = "odHXuAebcFTwxmKCrEYyzUQP"


def dd(
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


def find(
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


def download(
    command: Command, flags: Sequence[Word], values: Sequence[Word], positionals: Sequence[Word]
) -> Touches:
    """curl/wget: ``-o FILE``, ``--output-dir``/``-P DIR``, and names taken from URLs."""
    args = command.args
    if command.program == "curl":
        outputs = option_value(args, "--output")
        outputs += bundled_values(args, "o", _CURL_VALUE_LETTERS)
        dirs = option_value(args, "--output-dir")
        remote = has_flag(flags, "-O", "--remote-name", "--remote-name-all")
    else:
        outputs = option_value(args, "-O", "--output-document")
        dirs = option_value(args, "-P", "--directory-prefix")
        remote = not outputs
    out: Touches = []
    for word in outputs:
        if dirs and word.value is not None and not word.value.startswith("/"):
            for base in dirs:
                joined = None if base.value is None else base.value + "/" + word.value
                out.append((Word(joined, word.raw), _CHANGED))
        else:
            out.append((word, _CHANGED))
    out += [(base, Use(read=False, write=True, target=True, recursive=True)) for base in dirs]
    for word in positionals:
        value = word.value or ""
        if "://" not in value:
            out.append((word, _READ))
            continue
        name = value.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        name = name.rsplit("/", 1)[-1] if "/" in name else ""
        if remote and name:
            for base in dirs or [Word.literal(".")]:
                if base.value is not None:
                    out.append((Word.literal(base.value + "/" + name), _CHANGED))
    return out


def archive(
    command: Command, flags: Sequence[Word], values: Sequence[Word], positionals: Sequence[Word]
) -> Touches:
    """tar/zip: the archive (written when creating), members read, ``-C DIR`` the other way."""
    program, args = command.program, command.args
    old_style = program == "tar" and bool(positionals) and positionals[0] is args[0]
    first = (args[0].value or "") if args else ""
    creating = program == "zip" or has_flag(flags, "-c", "--create") or (old_style and "c" in first)
    if program == "zip":
        archives = list(positionals[:1])
    elif old_style and "f" in first:
        archives = list(positionals[1:2])
    else:
        archives = option_value(args, "-f", "--file")
    out: Touches = [
        (word, Use(read=not creating, write=creating, target=creating)) for word in archives
    ]
    out += [
        (word, Use(read=creating, write=not creating, target=not creating, recursive=True))
        for word in option_value(args, "-C", "--directory")
    ]
    skip = 1 if program == "zip" else (1 + len(archives) if old_style else 0)
    members = [w for w in positionals[skip:] if w not in archives]
    out += [(word, Use(read=True, write=False, recursive=True)) for word in members]
    return out


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
