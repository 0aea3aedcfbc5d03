"""Text the operator reads, made safe to show: one line, nothing interpreted, nothing hidden.

Every value the guard interpolates into a dialog, notice, block reason or footer (tool names,
paths, targets, the command, reasons, rule ids, the cwd) goes through :func:`one_line`, or
through :func:`command_line` for a command (which also redacts secrets). A character that a
terminal or a UI would interpret or not draw is shown escaped instead, as Python writes it
(``\\n``, ``\\x1b``, ``\\u202e``): control characters (C0, C1, DEL), line and paragraph
separators, format characters (bidi overrides and isolates, zero-width characters, soft
hyphen...), surrogates, private-use and unassigned code points, and every space other than
the plain space. So a file name can never forge a dialog line (``\\nKind: local-safe``),
hide text (ESC sequences) or reorder what is shown (bidi overrides).

Nothing is cut silently either: a value longer than its budget keeps its head and its tail
and says how many characters are hidden between them (``… [+312 chars] …``), and a list
names how many items it leaves out (``… and 7 more``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from audit.log import redact_preview

__all__ = [
    "UNSAFE_CATEGORIES",
    "command_line",
    "escape_char",
    "is_unsafe",
    "listing",
    "one_line",
]

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
"""Unicode categories shown escaped (``Zs``: every space but U+0020)."""

# Letters that draw nothing (Hangul fillers, the braille blank): invisible but not ``Cf``.
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# One escape as emitted by :func:`escape_char` (or any other single character).
_TOKEN = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt])|.", re.DOTALL)
_ELLIPSIS = " … [+{hidden} chars] … "


def is_unsafe(char: str) -> bool:
    """Whether ``char`` is shown escaped (see the module docstring)."""
    if char == " ":
        return False
    return unicodedata.category(char) in UNSAFE_CATEGORIES or char in _INVISIBLE_LETTERS


def escape_char(char: str) -> str:
    """``char`` as shown: itself, or its escape (``\\x1b``, ``\\u202e``, ``\\U000e0001``)."""
    if not is_unsafe(char):
        return char
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escaped(text: str) -> str:
    return "".join(escape_char(c) for c in text)


def _fit(shown: str, limit: int | None) -> str:
    """``shown`` (already escaped), or its head and tail around the count of hidden chars.

    The cut never splits an escape, and the count is of characters of the value (an
    escape counts as the one character it stands for).
    """
    if limit is None or len(shown) <= limit:
        return shown
    tokens = _TOKEN.findall(shown)
    budget = max(limit - len(_ELLIPSIS.format(hidden=len(tokens))), 2)
    head_budget = budget - budget // 2
    tail_budget = budget // 2
    head: list[str] = []
    used = 0
    for token in tokens:
        if used + len(token) > head_budget:
            break
        head.append(token)
        used += len(token)
    tail: list[str] = []
    used = 0
    for token in reversed(tokens[len(head) :]):
        if used + len(token) > tail_budget:
            break
        tail.append(token)
        used += len(token)
    hidden = len(tokens) - len(head) - len(tail)
    if hidden == 0:
        return shown
    return "".join(head) + _ELLIPSIS.format(hidden=hidden) + "".join(reversed(tail))


def one_line(value: object, limit: int | None = 240) -> str:
    """``value`` as one safe line (``str(value)``), at most about ``limit`` characters.

    >>> one_line("notes\\nKind: local-safe\\x1b[8m")
    'notes\\\\nKind: local-safe\\\\x1b[8m'
    >>> one_line("a" * 50 + "b" * 50, limit=40)
    'aaaaaaaaaaa … [+78 chars] … bbbbbbbbbbb'
    """
    return _fit(_escaped(str(value)), limit)


def command_line(command: str, limit: int | None = 240) -> str:
    """A command as one safe line: secrets redacted, head and tail kept when it is long.

    Redaction runs on each stretch between unsafe characters (a newline in a command is a
    command separator; it is shown as ``\\n``, never turned into a space that would make
    two commands read as one), before the command is shortened, so a secret is hidden
    wherever the cut falls.
    """
    parts: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            text = "".join(run)
            body = text.strip()
            if body:
                # The run's own length as the budget: redaction never shortens here. Its
                # edges' spaces are kept (``a\n  b`` stays two separate lines' worth).
                lead = text[: len(text) - len(text.lstrip())]
                trail = text[len(text.rstrip()) :]
                shown = redact_preview(body, limit=len(body) + 1)
                # Nothing redacted: the command exactly as typed (the preview collapses runs
                # of spaces, and two spaces inside quotes are part of what the command does).
                text = lead + (body if shown == " ".join(body.split()) else shown) + trail
            parts.append(text)
            run.clear()

    for at, char in enumerate(command):
        # A backslash-newline continues the same word (POSIX XCU 2.2.1): it stays in the
        # run so that redaction sees a secret split across it whole.
        continued = run[-1:] == ["\\"] and (char == "\n" or command[at : at + 2] == "\r\n")
        if continued or (run[-2:] == ["\\", "\r"] and char == "\n"):
            run.append(char)
        elif is_unsafe(char):
            flush()
            parts.append(escape_char(char))
        else:
            run.append(char)
    flush()
    # Redaction itself only writes safe text; escape again so that holds whatever it does.
    return _fit(_escaped("".join(parts)), limit)


def listing(
    items: Iterable[object], *, max_items: int = 12, limit: int | None = 240, sep: str = ", "
) -> str:
    """Distinct ``items`` (first-seen order), each :func:`one_line`; past ``max_items`` the
    rest is counted (``… and 7 more``), never dropped silently."""
    distinct = list(dict.fromkeys(str(item) for item in items))
    shown = [one_line(item, limit) for item in distinct[:max_items]]
    more = len(distinct) - len(shown)
    if more:
        shown.append(f"… and {more} more")
    return sep.join(shown)
