"""Bash quoting: the value of a word after quote removal, and quoting a value back."""

from __future__ import annotations

import itertools
import re

__all__ = [
    "decode_ansi_c",
    "expand_braces",
    "has_brace",
    "has_glob",
    "shell_quote",
    "splits_a_word",
    "unquote_double",
    "unquote_word",
]

_GLOB_CHARS = re.compile(r"(?<!\\)[*?\[]")
_BACKSLASH = re.compile(r"\\(.)", re.DOTALL)
_DQ_BACKSLASH = re.compile(r"\\([$`\"\\\n])")
_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def has_glob(text: str) -> bool:
    """Whether an unquoted word has an unescaped glob character."""
    return _GLOB_CHARS.search(text) is not None


def unquote_word(text: str) -> str:
    """An unquoted word's text: line continuations dropped, backslash escapes removed."""
    return _BACKSLASH.sub(r"\1", text.replace("\\\n", ""))


def unquote_double(text: str) -> str:
    """The content of a double-quoted string: a backslash escapes only $, `, ", itself, newline.

    A backslash-newline is a line continuation there too: bash removes both characters.
    """
    return _DQ_BACKSLASH.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def decode_ansi_c(body: str) -> str | None:
    """The body of a ``$'…'`` string with its escapes decoded; ``None`` when not fully decoded.

    Only escapes whose meaning does not depend on the locale or the bash version are
    decoded (``\\n``, ``\\t`` …, ``\\xHH`` and octal below 0x80). ``\\u``/``\\U``,
    ``\\c``, a NUL (bash cuts the word there), bytes above 0x7f and unknown escapes
    make the word unresolvable, so it is asked about (fail closed).
    """
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        digits = None
        if nxt == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            value = int(digits.group(0), 16) if digits else -1
            width = 2 + (len(digits.group(0)) if digits else 0)
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            value = int(digits.group(0), 8) if digits else -1
            width = 1 + (len(digits.group(0)) if digits else 0)
        if digits is None or not 0 < value < 0x80:
            return None
        out.append(chr(value))
        i += width
    return "".join(out)


_CONTINUATION = re.compile(r"(?<!\\)(?:\\\\)*\\\n")


def splits_a_word(text: str) -> bool:
    """Whether a line continuation (backslash-newline) sits inside a word.

    bash removes backslash-newline before it splits words, so ``r\\<newline>m`` is
    ``rm``; the parser reads two words. A continuation after whitespace is harmless.
    """
    for found in _CONTINUATION.finditer(text):
        start = found.end() - 2
        if start > 0 and text[start - 1] not in " \t\n;&|()":
            return True
    return False


def has_brace(text: str) -> bool:
    """Whether an unquoted word may undergo brace expansion (``{a,b}``, ``{1..3}``)."""
    open_at = text.find("{")
    return open_at >= 0 and "}" in text[open_at:] and ("," in text or ".." in text)


_MAX_BRACE_WORDS = 64


def expand_braces(text: str) -> list[str] | None:
    """Every word a brace expression expands to, ``None`` when unsure or too many.

    Comma lists (nested too) and numeric or single-letter ranges are expanded like bash;
    anything else with a brace is returned unchanged (bash leaves it alone).
    """
    out = _expand(text, 0)
    return out if out is not None and len(out) <= _MAX_BRACE_WORDS else None


def _expand(text: str, depth: int) -> list[str] | None:
    if depth > 8:
        return None
    start = text.find("{")
    while start >= 0:
        level = 0
        commas: list[int] = []
        for j in range(start, len(text)):
            ch = text[j]
            if ch == "{":
                level += 1
            elif ch == "}":
                level -= 1
                if level == 0:
                    body = text[start + 1 : j]
                    pieces = _split_body(body, [c - start - 1 for c in commas])
                    if pieces is None:
                        break
                    out: list[str] = []
                    for piece in pieces:
                        rest = _expand(text[:start] + piece + text[j + 1 :], depth + 1)
                        if rest is None:
                            return None
                        out.extend(rest)
                        if len(out) > _MAX_BRACE_WORDS:
                            return None
                    return out
            elif ch == "," and level == 1:
                commas.append(j)
        start = text.find("{", start + 1)
    return [text]


def _split_body(body: str, commas: list[int]) -> list[str] | None:
    if commas:
        bounds = [-1, *commas, len(body)]
        return [body[a + 1 : b] for a, b in itertools.pairwise(bounds)]
    found = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])", body)
    if found is None:
        return None
    if found.group(4):
        a, b = ord(found.group(4)), ord(found.group(5))
        step = 1 if a <= b else -1
        return [chr(c) for c in range(a, b + step, step)][: _MAX_BRACE_WORDS + 1]
    a, b = int(found.group(1)), int(found.group(2))
    inc = abs(int(found.group(3) or 1)) or 1
    if abs(b - a) // inc > _MAX_BRACE_WORDS:
        return [str(a)] * (_MAX_BRACE_WORDS + 1)
    step = inc if a <= b else -inc
    return [str(n) for n in range(a, b + (1 if step > 0 else -1), step)]


def shell_quote(text: str) -> str:
    """``text`` as one shell word (single-quoted unless it is plainly safe)."""
    if text and re.fullmatch(r"[A-Za-z0-9_./=:@%+,-]+", text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
