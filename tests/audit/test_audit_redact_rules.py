"""Each redaction rule pinned by its own cases: one it must redact, one near miss it must not.

The corpus tests (test_audit_redact_corpus.py) judge the rule set as a whole, with a
tolerance; here each case is caught by one rule only, so removing or weakening any single
rule of ``audit._redaction.redact`` fails a case by name. Expected outputs are exact.
"""

from __future__ import annotations

import pytest

from audit.log import redact_preview

# (rule, text, expected preview): the first case of each rule must be redacted by it alone.
MUST_REDACT = [
    (
        "private-key",
        "cat <<E\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\nE",
        "cat <<E [REDACTED PRIVATE KEY] E",
    ),
    (
        "private-key-cut",
        "printf '-----BEGIN EC PRIVATE KEY-----\nabc",
        "printf '[REDACTED PRIVATE KEY]",
    ),
    (
        "authorization",
        "curl -H 'Authorization: Digest q=1 r=2' x",
        "curl -H 'Authorization: [REDACTED]' x",
    ),
    ("proxy-authorization", "proxy-authorization= Negotiate yy", "proxy-authorization= [REDACTED]"),
    ("bearer-short", "wget --header bearer abc123 x", "wget --header bearer [REDACTED] x"),
    ("basic", "say Basic dXNlcjpw", "say Basic [REDACTED]"),
    (
        "url-password",
        "git clone https://bob:hunter2@example.com/r.git",
        "git clone https://bob:[REDACTED]@example.com/r.git",
    ),
    ("json-name", 'echo {"cookie": "a b"}', 'echo {"cookie": "[REDACTED]"}'),
    ("json-name-compact", '{"refresh_token":"abc"}', '{"refresh_token":"[REDACTED]"}'),
    ("long-option", "deploy --token abc", "deploy --token [REDACTED]"),
    ("long-option-quoted", "deploy --api-key 'a b'", "deploy --api-key [REDACTED]"),
    ("name-value", "API_KEY=abc make", "API_KEY=[REDACTED] make"),
    ("cookie-header", "curl -H 'Cookie: sid=abc' x", "curl -H 'Cookie: [REDACTED]' x"),
    ("name-colon", "X-Api-Key: abc", "X-Api-Key: [REDACTED]"),
]

# Near misses: each is one step away from a case above and must come out unchanged.
MUST_NOT_REDACT = [
    ("private-key", "-----BEGIN PUBLIC KEY-----"),
    ("authorization", "read the authorization docs"),
    ("bearer-short", "the bearer of news"),
    ("bearer-short", "bearer abc12"),  # under six characters: a word, not a credential
    ("url-password", "curl https://example.com:8080/a@b"),
    ("json-name", 'echo {"client_id": "abc"}'),
    ("long-option", "gpg --list-secret-keys --with-colons"),
    ("long-option", "setxkbmap --keyboard us"),
    ("name-value", "PATH=/usr/bin make"),
    ("name-value", "pytest tests/test_token.py::case"),
    ("name-value", "AWS_ACCESS_KEY_ID=abc make"),
]

# A backslash-newline continues the word (POSIX XCU 2.2.1): the secret is one value.
CONTINUED = [
    ('curl -H "Authorization: Bearer sk-abc123\\\ndef456" https://x', "def456"),
    ("curl -H 'Authorization: Bearer sk-abc123\\\ndef456' https://x", "def456"),
    ("export TOKEN=abc\\\ndef", "def"),
    ("export TOKEN=abc\\\r\ndef && ls", "def"),
    ('API_KEY="abc\\\ndef" make', "def"),
    ("deploy --password abc\\\ndef", "def"),
    ("curl -H 'X-Api-Key: abcdef\\\nghijkl' x", "ghijkl"),
    ("echo ghp_abcdefghijklmnopqrst\\\nuvwxyz0123456789", "uvwxyz0123456789"),
    ("export TOKEN=ab\\\ncd\\\nef", "ef"),
]


@pytest.mark.parametrize(("rule", "text", "expected"), MUST_REDACT, ids=[c[0] for c in MUST_REDACT])
def test_each_rule_redacts_its_case(rule: str, text: str, expected: str) -> None:
    assert redact_preview(text, limit=400) == expected


@pytest.mark.parametrize(("rule", "text"), MUST_NOT_REDACT, ids=[c[0] for c in MUST_NOT_REDACT])
def test_each_rule_leaves_its_near_miss(rule: str, text: str) -> None:
    assert redact_preview(text, limit=400) == text


@pytest.mark.parametrize(("text", "rest"), CONTINUED)
def test_a_secret_split_by_a_line_continuation_is_redacted_whole(text: str, rest: str) -> None:
    out = redact_preview(text, limit=400)
    assert rest not in out and "[REDACTED]" in out
    assert redact_preview(out, limit=400) == out


def test_a_continuation_outside_a_secret_only_joins_the_lines() -> None:
    assert redact_preview("make \\\n  all") == "make all"
