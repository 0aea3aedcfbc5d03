"""Secret shapes from a maintained rule set: the detectors of Yelp's ``detect-secrets``.

Only the detectors' compiled regular expressions are used, in process, on one
short preview at a time: no baseline, no files, no settings, no network
verification. They are loaded once, on first use (importing ``detect_secrets``
costs about 0.2 s, which a process that never redacts should not pay), and kept.

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

_EXCLUDED = frozenset({"IPPublicDetector", "PrivateKeyDetector"})

# Token characters a match is widened over, so a detector that matches a fixed-length
# prefix (Stripe's 24 characters of a 99-character key) never leaves the rest behind.
_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_RIGHT = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_TRIM = " \t\"'=:,()"


@cache
def _rules() -> tuple[tuple[_Rule, ...], tuple[re.Pattern[str], ...]]:
    """The detectors' patterns (compiled once) and the private-key markers."""
    from detect_secrets.plugins import (  # lazy on purpose (module docstring)
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        keyword,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )
    from detect_secrets.plugins.base import RegexBasedDetector

    modules = (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )
    rules: list[_Rule] = []
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, RegexBasedDetector)
                and value is not RegexBasedDetector
                and value.__module__ == module.__name__
                and value.__name__ not in _EXCLUDED
            ):
                # A class attribute (the base declares it an abstract property).
                patterns: tuple[re.Pattern[str], ...] = tuple(vars(value)["denylist"])
                rules.extend(_Rule(p, None) for p in patterns)
    seen: set[str] = set()
    keyword_groups = {**keyword.CONFIG_DENYLIST_REGEX_TO_GROUP}
    keyword_groups.update(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    for pattern, group in keyword_groups.items():
        if pattern.pattern not in seen:
            seen.add(pattern.pattern)
            rules.append(_Rule(pattern, group, keyword=True))
    rules.extend(_Rule(re.compile(p), None) for p in _SUPPLEMENT)
    markers = tuple(private_key.PrivateKeyDetector.denylist)
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
