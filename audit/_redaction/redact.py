"""Short, secret-redacted previews of tool input for the audit log and for people.

Redaction is best effort and errs on the side of hiding: it removes values of
``NAME=value`` / ``NAME: value`` / ``--name value`` where the name looks like a
credential (any shell quoting, ``$'…'`` included), ``Authorization`` headers,
bearer/basic credentials, passwords in URLs and private key blocks; then option
values that are credentials by their place on the command line
(:mod:`audit._redaction.shellargs`: ``mysql -pPASS``, ``sshpass -p``, ``curl -u user:PASS``);
then secret shapes from the detectors of the detect-secrets library
(:mod:`audit._redaction.detectors`). docs/performance.md measures it. It cannot recognise a
secret that looks like ordinary text; the payload hash, not the preview, is
what binds evidence to an action.
"""

from __future__ import annotations

import re

from audit._errors import UsageError
from audit._redaction.detectors import secret_spans
from audit._redaction.shellargs import credential_spans

__all__ = ["REDACTED", "redact_preview"]

REDACTED = "[REDACTED]"

_NAME = (
    r"[A-Za-z0-9_.-]*"
    r"(?:key(?![-_]?id\b|board|map|word|server)|token|secret|passw(?:or)?d|passphrase|pass|pwd|credential|auth(?!or)|cookie|session"
    r"|private|signature|sig)"
    r"[A-Za-z0-9_.-]*"
)
# Never re-redact a value that is already "[REDACTED]" (redaction is idempotent).
# A shell word: ANSI-C $'…', "…" (with escapes), '…' and bare runs, glued together. The
# first part may be unterminated (a cut preview); a glued part must close its quote.
_PART = (
    r"\$'(?:[^'\\\n]|\\.)*'{q}"
    r'|"(?:[^"\\\n]|\\.)*"{q}'
    r"|'[^'\n]*'{q}"
    r"|(?:\\.|[^\s\"'&;|,)}}\]\\$])+"
    r"|\$(?!')[^\s\"'&;|,)}}\]]*"
)
_VALUE = r"(?!\[REDACTED)(?:" + _PART.format(q="?") + r")(?:" + _PART.format(q="") + r")*"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM private keys, even when the END line is missing (cut off).
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    # Authorization / Proxy-Authorization headers: the whole value.
    (
        re.compile(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*+)(?!\[REDACTED)[^\r\n\"']+"),
        r"\1" + REDACTED,
    ),
    # Bearer / Basic credentials anywhere.
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}"), r"\1\2" + REDACTED),
    # user:password@ in URLs (the scheme is matched from its start only: linear time).
    (
        re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@"),
        r"\1" + REDACTED + "@",
    ),
    # "api_key": "value" (JSON and friends).
    (
        re.compile(r'(?i)("' + _NAME + r'"\s*:\s*)"(?:[^"\\\n]|\\.)*"?'),
        r'\1"' + REDACTED + '"',
    ),
    # --password value, --token=value (short options: audit._redaction.shellargs, per program).
    # (A next word that starts with "-" is the next option: gpg --list-secret-keys --x.)
    (re.compile(r"(?i)(--" + _NAME + r")(=|\s+)(?!-)" + _VALUE), r"\1\2" + REDACTED),
    # API_KEY=value, export GITHUB_TOKEN=value, X-Api-Key: value (not test_token.py::case).
    (
        re.compile(r"(?i)(?<![A-Za-z0-9_.-])(" + _NAME + r")(\s*=\s*|\s*:(?!:)\s*)" + _VALUE),
        r"\1\2" + REDACTED,
    ),
)

_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+")


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


# A backslash before a line feed is a line continuation (POSIX XCU 2.2.1, and inside
# double quotes 2.2.3): the shell removes both, so a value split by one is one word.
_CONTINUATION = re.compile(r"\\\r?\n")


def _redact(text: str) -> str:
    text = _CONTINUATION.sub("", text)
    # Structure first (headers, URLs, NAME=value, --name value), then what stands in a
    # credential's place on a command line, then the secret-shape rule set.
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    spans = credential_spans(text) + secret_spans(text)
    out: list[str] = []
    last = 0
    for start, end in _merge(spans):
        if REDACTED in text[start:end] or text.startswith(REDACTED, start):
            continue
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return _SPACE.sub(" ", "".join(out)).strip()


def redact_preview(text: str, *, limit: int = 120) -> str:
    """A one-line preview of ``text``, secrets replaced by ``[REDACTED]``, at most ``limit`` chars.

    Secrets are redacted before shortening, so a secret straddling the cut is
    still hidden. Control and bidirectional-override characters become spaces;
    runs of whitespace collapse to one. A shortened preview ends with ``…``.
    Applying it again to its own output changes nothing.

    >>> redact_preview("curl -H 'Authorization: Bearer abc.def' https://x && API_KEY=s3cr3t make")
    "curl -H 'Authorization: [REDACTED]' https://x && API_KEY=[REDACTED] make"
    """
    if type(limit) is not int or limit < 1:
        raise UsageError("limit", "must be a positive integer", limit)
    if not isinstance(text, str):
        raise UsageError("text", "must be a string", type(text).__name__)
    # Look well past the cut so a secret that starts before it is still recognised.
    window = max(4 * limit, 4096)
    out = text[:window]
    cut = len(text) > window
    # Redact, shorten, repeat until stable: a cut can leave a fragment ("API_KEY=…")
    # that a later pass would rewrite, and the result must be a fixed point.
    for _ in range(8):
        shown = _redact(out)
        if cut or len(shown) > limit:
            shown = shown[: limit - 1].rstrip() + "…"
        cut = False
        if shown == out:
            break
        out = shown
    return out
