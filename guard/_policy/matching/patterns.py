"""Whether two path globs can name the same path (for a bash glob against a rule's glob).

A bash glob in a path position is expanded against the file system when the command is
checked, but the file system can change while the command runs; so the pattern itself is
also compared with the rules. Both sides are lists of segments: ``*`` and ``?`` stay within
a segment, a ``[…]`` class counts as any one character, a segment ``**`` spans any number
of segments, ``\\`` escapes. On the bash side a wildcard never makes a name's leading
``.`` (bash without ``dotglob``). The answer errs towards "they can".
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = ["Shape", "segments_intersect", "shapes_intersect"]

Shape = tuple[str, ...]

_STAR = "*"
_ONE = "?"


def _tokens(segment: str) -> tuple[str, ...]:
    """A segment as tokens: one literal character each (prefixed ``=``), ``*`` or ``?``."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "\\" and i + 1 < len(segment):
            out.append("=" + segment[i + 1])
            i += 2
            continue
        if ch == "*":
            if not out or out[-1] != _STAR:
                out.append(_STAR)
        elif ch == "?":
            out.append(_ONE)
        elif ch == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                out.append("=[")
            else:
                out.append(_ONE)
                i = end
        else:
            out.append("=" + ch)
        i += 1
    return tuple(out)


@lru_cache(maxsize=8192)
def segments_intersect(bash: str, rule: str, case_sensitive: bool) -> bool:
    """Whether one name can match both the bash glob segment and the rule glob segment."""
    if not case_sensitive:
        bash, rule = bash.casefold(), rule.casefold()
    a, b = _tokens(bash), _tokens(rule)
    seen: set[tuple[int, int, bool]] = set()

    def go(i: int, j: int, started: bool) -> bool:
        key = (i, j, started)
        if key in seen:
            return False
        seen.add(key)
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == _STAR and go(i + 1, j, started):
            return True
        if j < len(b) and b[j] == _STAR and go(i, j + 1, started):
            return True
        if i >= len(a) or j >= len(b):
            return False
        ta, tb = a[i], b[j]
        if ta[0] == "=" and tb[0] == "=" and ta != tb:
            return False
        char = ta[1:] if ta[0] == "=" else (tb[1:] if tb[0] == "=" else "")
        if not started and char == "." and ta[0] != "=":
            return False  # a bash wildcard does not match a leading dot
        ni = i if ta == _STAR else i + 1
        nj = j if tb == _STAR else j + 1
        return (ni, nj) != (i, j) and go(ni, nj, True)

    return go(0, 0, False)


def shapes_intersect(bash: Sequence[str], rule: Sequence[str], *, case_sensitive: bool) -> bool:
    """Whether a path can match both segment lists (``**`` spans segments on either side)."""
    seen: set[tuple[int, int]] = set()

    def go(i: int, j: int) -> bool:
        if (i, j) in seen:
            return False
        seen.add((i, j))
        if i == len(bash) and j == len(rule):
            return True
        if i < len(bash) and bash[i] == "**" and (go(i + 1, j) or (j < len(rule) and go(i, j + 1))):
            return True
        if j < len(rule) and rule[j] == "**" and (go(i, j + 1) or (i < len(bash) and go(i + 1, j))):
            return True
        if i < len(bash) and j < len(rule) and bash[i] != "**" and rule[j] != "**":
            return segments_intersect(bash[i], rule[j], case_sensitive) and go(i + 1, j + 1)
        return False

    return go(0, 0)
