"""Path globs of the policy: compiled once per policy, matched against normalized paths.

Pattern forms (after ``${GUARD_HOME}``, ``${PI_AGENT_DIR}``, ``${PROJECT}`` and ``~``
are substituted):

* no ``/`` (``.env*``, ``*.pem``): matches that name at any depth;
* absolute (``/etc``, ``~/.ssh``, ``${GUARD_HOME}``): anchored there;
* relative with a ``/`` (``secrets/*.json``): anchored at the project root, or at any
  depth when the policy has no project.

``*`` and ``?`` never cross ``/``; ``**`` does. Every pattern also covers everything
beneath what it names: protecting a directory protects its contents.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from guard._errors import GlobError
from guard._policy.matching.patterns import Shape, shapes_intersect

__all__ = ["PathMatcher", "compile_globs", "expand_lists", "expand_placeholders", "is_under"]

_PLACEHOLDER = re.compile(r"\$\{([A-Z_0-9]+)\}")
_FLAGS = re.DOTALL
_GLOB_CHARS = frozenset("*?[")
_SPECIAL = re.compile(r"[*?\[]")


def expand_placeholders(pattern: str, values: Mapping[str, str]) -> list[tuple[bool, str]]:
    """Split ``pattern`` into (is_literal, text) pieces; placeholder values are literal."""
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for found in _PLACEHOLDER.finditer(pattern):
        name = found.group(1)
        if name not in values:
            raise GlobError(
                pattern, f"unknown placeholder ${{{name}}} (known: {', '.join(sorted(values))})"
            )
        if found.start() > pos:
            pieces.append((False, pattern[pos : found.start()]))
        pieces.append((True, values[name]))
        pos = found.end()
    if pos < len(pattern):
        pieces.append((False, pattern[pos:]))
    return pieces


def expand_lists(
    patterns: Iterable[str], lists: Mapping[str, Sequence[str]]
) -> tuple[list[str], dict[str, str]]:
    """Patterns naming a list placeholder, repeated once per value (none for an empty list).

    Each value becomes a single placeholder of its own (``${NAME__0}``, …), so it stays a
    literal path, as every placeholder value is. Returns the patterns and those values.
    """
    out: list[str] = []
    values: dict[str, str] = {}
    for pattern in patterns:
        expanded = [pattern]
        for found in set(_PLACEHOLDER.findall(pattern)) & set(lists):
            token = "${" + found + "}"
            expanded = [
                text.replace(token, "${" + f"{found}__{index}" + "}")
                for text in expanded
                for index in range(len(lists[found]))
            ]
            values.update({f"{found}__{i}": v for i, v in enumerate(lists[found])})
        out.extend(expanded)
    return out, values


def _glob_to_regex(text: str) -> str:
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        special = _SPECIAL.search(text, i)
        end = n if special is None else special.start()
        if end > i:
            out.append(re.escape(text[i:end]))  # a run of plain characters at once
            i = end
            continue
        ch = text[i]
        if ch == "*":
            if text.startswith("**", i):
                i += 2
                if i < n and text[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:  # "["
            end = text.find("]", i + 2 if text.startswith(("[!", "[^"), i) else i + 1)
            if end < 0:
                raise GlobError(text, "unclosed '['")
            body = text[i + 1 : end]
            if body.startswith(("!", "^")):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        i += 1
    return "".join(out)


def _has_glob(text: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in text)


def _collapse_literal(text: str) -> str:
    while "//" in text:
        text = text.replace("//", "/")
    return text.rstrip("/") or "/"


@dataclass(frozen=True, slots=True)
class PathMatcher:
    """A compiled set of globs: ``match(path)`` and the literal roots it protects.

    The globs under the home or the project are kept apart from the rest as ``under``:
    (that directory, what may follow it). What follows holds no home or project, so it is
    compiled once per process however many homes and projects are loaded (tests, reloads).
    """

    regex: re.Pattern[str] | None
    roots: tuple[str, ...]
    case_sensitive: bool
    shapes: tuple[Shape, ...] = ()
    under: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = ()

    def match(self, path: str) -> bool:
        if self.regex is not None and self.regex.match(path) is not None:
            return True
        for directory, rest in self.under:
            head = directory.match(path)
            if head is not None and rest.match(path, head.end()) is not None:
                return True
        return False

    def could_match(self, pattern: str, *, recursive: bool, aimed: bool = False) -> bool:
        """Whether a path the glob ``pattern`` (normalized) names could be covered.

        With ``aimed`` only shapes whose last segment matches the glob's last segment as
        text count: the glob is spelled at a protected name (``*.pem``, ``id_rsa*``).
        """
        segments = tuple(s for s in pattern.split("/") if s)
        last = segments[-1] if segments else ""
        if recursive:
            segments = (*segments, "**")
        for shape in self.shapes:
            if aimed and not _names(last, shape, self.case_sensitive):
                continue
            if shapes_intersect(segments, shape, case_sensitive=self.case_sensitive):
                return True
        return False

    def holds_beneath(self, path: str) -> bool:
        """Whether a path beneath ``path`` could match one of these globs that is anchored
        (``/proc/*/environ`` beneath ``/proc/self``); globs at any depth do not count."""
        segments = (*(s for s in path.split("/") if s), "**")
        return any(
            shape[:1] != ("**",)
            and shapes_intersect(segments, shape, case_sensitive=self.case_sensitive)
            for shape in self.shapes
        )

    def protects_beneath(self, path: str) -> bool:
        """Whether a literal root of these globs is ``path`` itself or lies beneath it."""
        return any(is_under(root, path, case_sensitive=self.case_sensitive) for root in self.roots)


def _names(segment: str, shape: Shape, case_sensitive: bool) -> bool:
    names = [s for s in shape if s != "**"]
    if not names:
        return False
    if not case_sensitive:
        return fnmatch.fnmatchcase(segment.casefold(), names[-1].casefold())
    return fnmatch.fnmatchcase(segment, names[-1])


def is_under(path: str, ancestor: str, *, case_sensitive: bool) -> bool:
    """``path`` equals ``ancestor`` or lies beneath it (both normalized, absolute)."""
    if not case_sensitive:
        path, ancestor = path.casefold(), ancestor.casefold()
    if ancestor == "/":
        return True
    return path == ancestor or path.startswith(ancestor + "/")


def compile_globs(
    patterns: Iterable[str],
    *,
    values: Mapping[str, str],
    home: str,
    anchor: str | None,
    case_sensitive: bool,
) -> PathMatcher:
    """Compile ``patterns`` into one matcher (see the module docstring for the forms)."""
    alternatives, roots, shapes = _alternatives(patterns, values, home, anchor)
    if not alternatives:
        return PathMatcher(None, (), case_sensitive, ())
    # DOTALL and \Z: a name may hold a newline, and ``.`` without DOTALL stops at one while
    # ``$`` also matches before a final one, so ``~/.ssh/a<LF>b`` escaped ``~/.ssh``.
    flags = _FLAGS | (0 if case_sensitive else re.IGNORECASE)
    rest, groups = _by_directory(alternatives, (home, anchor))
    regex = _compiled("^(?:" + "|".join(rest) + ")(?:/.*)?\\Z", flags) if rest else None
    under = tuple(
        (_compiled(directory, flags), _compiled("(?:" + "|".join(inside) + ")(?:/.*)?\\Z", flags))
        for directory, inside in groups.items()
    )
    return PathMatcher(regex, tuple(roots), case_sensitive, tuple(shapes), under)


def _alternatives(
    patterns: Iterable[str], values: Mapping[str, str], home: str, anchor: str | None
) -> tuple[list[str], list[str], list[Shape]]:
    """Each glob's regex (an alternative of ``^(?:…)(?:/.*)?\\Z``), the literal roots and
    the shapes of ``patterns``."""
    alternatives: list[str] = []
    roots: list[str] = []
    shapes: list[Shape] = []
    for pattern, chosen in _variants(patterns, values):
        pieces = expand_placeholders(pattern.replace("\\", "/"), chosen)
        if any(segment == ".." for _, text in pieces for segment in text.split("/")):
            raise GlobError(pattern, "'..' is not allowed in a path glob")
        while pieces and not pieces[0][0] and pieces[0][1].startswith("./"):
            pieces[0] = (False, pieces[0][1][2:])
        if pieces and not pieces[0][0]:
            first = pieces[0][1]
            if first == "~" or first.startswith("~/"):
                pieces[0] = (False, first[1:])
                pieces.insert(0, (True, home))
        joined_literal = pieces[0][0] if pieces else False
        text_start = pieces[0][1] if pieces else ""
        absolute = joined_literal or text_start.startswith("/")
        body = "".join(
            re.escape(text) if literal else _glob_to_regex(text) for literal, text in pieces
        )
        raw = "".join(text for _, text in pieces)
        stripped = raw.rstrip("/")
        shape_text = "".join(
            re.sub(r"([*?\[\\])", r"\\\1", text) if literal else text for literal, text in pieces
        ).rstrip("/")
        if absolute:
            regex = body.rstrip("/") if stripped else "/"
            if stripped and not any(not lit and _has_glob(text) for lit, text in pieces):
                roots.append(_collapse_literal(raw))
            alternatives.append(regex if regex != "/" else "")
            shapes.append(_shape(shape_text, anchored=True))
        elif "/" not in stripped:
            alternatives.append("(?:.*/)?" + body.rstrip("/"))
            shapes.append(_shape(shape_text, anchored=False))
        elif anchor is not None:
            alternatives.append(re.escape(anchor.rstrip("/")) + "/" + body.rstrip("/"))
            if not _has_glob(stripped):
                roots.append(_collapse_literal(anchor.rstrip("/") + "/" + stripped))
            escaped = re.sub(r"([*?\[\\])", r"\\\1", anchor.rstrip("/"))
            shapes.append(_shape(escaped + "/" + shape_text, anchored=True))
        else:
            alternatives.append("(?:.*/)?" + body.rstrip("/"))
            shapes.append(_shape(shape_text, anchored=False))
    return alternatives, roots, shapes


def _by_directory(
    alternatives: Sequence[str], directories: Iterable[str | None]
) -> tuple[list[str], dict[str, list[str]]]:
    """``alternatives`` that start with one of ``directories`` (escaped, then ``/``) apart,
    by directory, with that start taken off; the rest as they are.

    ``^D/(?:a|b)(?:/.*)?\\Z`` matches as ``D/`` at the start and then ``(?:a|b)(?:/.*)?\\Z``
    from its end: a literal matches a fixed number of characters, even ignoring case.
    """
    prefixes = sorted(
        {re.escape(d.rstrip("/")) + "/" for d in directories if d and d.rstrip("/")},
        key=len,
        reverse=True,
    )
    rest: list[str] = []
    groups: dict[str, list[str]] = {}
    for alternative in alternatives:
        prefix = next((p for p in prefixes if alternative.startswith(p)), None)
        if prefix is None:
            rest.append(alternative)
        else:
            groups.setdefault(prefix, []).append(alternative[len(prefix) :])
    return rest, groups


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    """``re.compile``, kept apart from ``re``'s own small cache that every other regex of
    the process shares; a pattern's text is all that decides what it compiles to."""
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise GlobError(pattern, f"cannot compile glob: {exc}") from None


def _variants(
    patterns: Iterable[str], values: Mapping[str, str]
) -> Iterable[tuple[str, Mapping[str, str]]]:
    """Each pattern with the placeholder values, and again with their symlink-resolved forms.

    A placeholder directory reached through a symlink (``~/.pi`` linked elsewhere) is then
    covered under both names.
    """
    resolved: dict[str, str] = {}

    def real(name: str) -> str:
        if name not in resolved:
            resolved[name] = _real(values[name])
        return resolved[name]

    for pattern in patterns:
        yield pattern, values
        if "${" not in pattern:
            continue
        named = [k for k in values if "${" + k + "}" in pattern]
        if any(real(k) != values[k] for k in named):
            yield pattern, {**values, **{k: real(k) for k in named}}


def _real(path: str) -> str:
    try:
        return os.path.realpath(path) if path.startswith("/") else path
    except (OSError, ValueError):
        return path


def _shape(text: str, *, anchored: bool) -> Shape:
    """A rule pattern as segments: at any depth unless anchored, everything beneath too."""
    segments = tuple(s for s in text.split("/") if s and s != ".")
    return (*segments, "**") if anchored else ("**", *segments, "**")
