"""Secret shapes from a maintained rule set: the detectors of Yelp's ``detect-secrets``.

Only the detectors' regular expressions are used, in process, on one short preview
at a time: no baseline, no files, no settings, no network verification. They are
kept as text in :mod:`audit._redaction._detect_secrets`, generated from the
installed library by ``python -m tools.redaction_rules`` (a test fails when the two
differ): importing ``detect_secrets`` cost every process that redacts about 0.1
CPU-seconds, most of it ``requests``. They are compiled once, on first use.

Left out on purpose: ``IPPublicDetector`` (an address is not a credential) and the
high-entropy string plugins (commit hashes and checksums are everyday command
text). ``PrivateKeyDetector``'s markers start a block that runs to its END line.

A short supplement adds well-known token shapes detect-secrets 1.5 does not know
(fine-grained GitHub tokens, Google API keys, OpenAI/Anthropic project keys,
Hugging Face, bare npm and PyPI tokens, Artifactory keys in single quotes) or
matches only partly (Stripe keys longer than 24 characters); ``docs/performance.md``
measures both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from audit._redaction._detect_secrets import MARKERS, RULES

__all__ = ["secret_spans"]


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    group: int | None
    """The group holding the secret, or None: the longest participating group if it is
    at least 8 characters, otherwise the whole match (trimmed of delimiters)."""
    keyword: bool = False
    """A keyword rule: an unquoted value ends at the first blank or shell operator."""


# Shapes detect-secrets 1.5 lacks (each a public, documented token format).
_SUPPLEMENT = (
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{16,}",
    r"sk-[A-Za-z0-9]{32,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"npm_[A-Za-z0-9]{36}",
    r"pypi-[A-Za-z0-9_-]{50,}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"xox[abprse]-[A-Za-z0-9-]{10,}",
    r"(?:sk|rk|pk)_(?:live|test)_[0-9a-zA-Z]{16,}",
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"AKCp[0-9][A-Za-z0-9]{60,}",
)

# Token characters a match is widened over, so a detector that matches a fixed-length
# prefix (Stripe's 24 characters of a 99-character key) never leaves the rest behind.
_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_RIGHT = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_TRIM = " \t\"'=:,()"


@cache
def _rules() -> tuple[tuple[_Rule, ...], tuple[re.Pattern[str], ...]]:
    """The detectors' patterns and the supplement (compiled once), and the private-key
    markers."""
    rules = [_Rule(re.compile(p, flags), group, keyword) for p, flags, group, keyword in RULES]
    rules.extend(_Rule(re.compile(p), None) for p in _SUPPLEMENT)
    markers = tuple(re.compile(p, flags) for p, flags in MARKERS)
    return tuple(rules), markers


_BLANK_OR_OPERATOR = re.compile(r"[\s;&|)]")
_END_OF_KEY = re.compile(r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|---- END SSH2)")


def _span(rule: _Rule, text: str, match: re.Match[str]) -> tuple[int, int] | None:
    if rule.group is not None:
        start, end = match.span(rule.group)
        if start < 0 or start == end:
            return None
        quoted = start > 0 and text[start - 1] in "'\"`"
        if rule.keyword and not quoted:
            cut = _BLANK_OR_OPERATOR.search(text, start, end)
            if cut is not None:
                end = cut.start()
        return (start, end) if end > start else None
    groups = [match.span(g) for g in range(1, (match.re.groups or 0) + 1)]
    groups = [(a, b) for a, b in groups if a >= 0 and b - a >= 8]
    if groups:
        return max(groups, key=lambda s: s[1] - s[0])
    start, end = match.span()
    while start < end and text[start] in _TRIM:
        start += 1
    while end > start and text[end - 1] in _TRIM:
        end -= 1
    return (start, end) if end > start else None


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of ``text`` that the rule set recognises as secrets (may overlap)."""
    rules, markers = _rules()
    spans: list[tuple[int, int]] = []
    for rule in rules:
        for match in rule.pattern.finditer(text):
            span = _span(rule, text, match)
            if span is None:
                continue
            start, end = span
            if not rule.keyword:
                while start > 0 and text[start - 1] in _LEFT:
                    start -= 1
                right = _RIGHT.match(text, end)
                end = right.end() if right is not None else end
            spans.append((start, end))
    for marker in markers:
        for match in marker.finditer(text):
            end_line = _END_OF_KEY.search(text, match.end())
            spans.append((match.start(), end_line.end() if end_line else len(text)))
    return spans
