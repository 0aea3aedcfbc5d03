"""Which paths a simple command touches, and how: read, write, delete/overwrite, recursively.

Path rules match these mentions; the dialog shows the targets. Which words name paths, and
how, is the shell analysis' knowledge of each program (``bash/touches``: unknown programs get
their static arguments counted as read *and* write, fail closed); here they become paths:
normalized, braces and unquoted globs expanded, runtime-only words kept unresolved.
"""

from __future__ import annotations

import glob as globmod
import os
from collections.abc import Callable
from dataclasses import dataclass

from guard._policy.bash.model import Command, Word
from guard._policy.bash.parsing.quoting import expand_braces
from guard._policy.bash.programs import touched

__all__ = ["Mention", "command_mentions"]

_MAX_GLOB_RESULTS = 64

Normalizer = Callable[[str, str], "str | None"]


@dataclass(frozen=True, slots=True)
class Mention:
    """A path a command names: ``path`` normalized, ``raw`` as written."""

    path: str | None
    raw: str
    read: bool
    write: bool
    target: bool = False
    recursive: bool = False
    pattern: str | None = None
    """For a glob: the normalized pattern, checked against the rules as a pattern too."""


def command_mentions(command: Command, normalize: Normalizer, home: str) -> list[Mention]:
    """Every path ``command`` names, with how it uses it."""
    out: list[Mention] = []

    def add(
        word: Word, *, read: bool, write: bool, target: bool = False, recursive: bool = False
    ) -> None:
        value = word.value
        if value is None:
            # Only known at runtime: recorded without a path, which asks (fail closed).
            out.append(Mention(None, word.raw, read, write, target, recursive))
            return
        if not value or value == "-" or "://" in value or "\x00" in value:
            return
        texts = [value]
        if word.brace:
            expanded = expand_braces(value)
            if expanded is None:
                out.append(Mention(None, word.raw, read, write, target, recursive))
                return
            texts = list(dict.fromkeys([*expanded, value]))
        for text in texts:
            if text.startswith(("~+", "~-")) or (text[:1] == "~" and text[1:2].isdigit()):
                out.append(Mention(None, word.raw, read, write, target, recursive))
                continue
            candidates = [text]
            if text.startswith("~") and not text.startswith("~/") and text != "~":
                candidates = [os.path.expanduser(text)]
            pattern: str | None = None
            if word.glob:
                pattern = normalize(candidates[0], command.cwd)
                candidates.extend(_expand_glob(candidates[0], command.cwd, home))
            for candidate in candidates:
                path = normalize(candidate, command.cwd)
                if path is not None:
                    shown = word.raw if candidate == value else candidate
                    out.append(
                        Mention(path, shown, read, write, target, recursive, pattern=pattern)
                    )
                    pattern = None

    for word, use in touched(command):
        add(word, read=use.read, write=use.write, target=use.target, recursive=use.recursive)
    return out


def _expand_glob(pattern: str, cwd: str, home: str) -> list[str]:
    """What an unquoted glob expands to now (bounded); hidden files only if asked for."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = home + pattern[1:]
    try:
        found = globmod.iglob(pattern, root_dir=cwd if not pattern.startswith("/") else None)
        out: list[str] = []
        for item in found:
            out.append(item)
            if len(out) >= _MAX_GLOB_RESULTS:
                break
    except (OSError, ValueError):
        return []
    return out
