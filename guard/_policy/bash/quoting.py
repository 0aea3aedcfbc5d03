"""Bash quoting: the value of a word after quote removal, and quoting a value back."""

from __future__ import annotations

import re

__all__ = ["decode_ansi_c", "has_glob", "shell_quote", "unquote_double", "unquote_word"]

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
    """The content of a double-quoted string: a backslash escapes only $, `, ", itself, newline."""
    return _DQ_BACKSLASH.sub(r"\1", text)


def decode_ansi_c(body: str) -> str:
    """The body of a ``$'…'`` string with its backslash escapes decoded."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ANSI_SIMPLE:
                out.append(_ANSI_SIMPLE[nxt])
                i += 2
                continue
            if nxt == "x":
                digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
                if digits:
                    out.append(chr(int(digits.group(0), 16)))
                    i += 2 + len(digits.group(0))
                    continue
            if nxt in "01234567":
                digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
                if digits:
                    out.append(chr(int(digits.group(0), 8)))
                    i += 1 + len(digits.group(0))
                    continue
            out.append(nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def shell_quote(text: str) -> str:
    """``text`` as one shell word (single-quoted unless it is plainly safe)."""
    if text and re.fullmatch(r"[A-Za-z0-9_./=:@%+,-]+", text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
