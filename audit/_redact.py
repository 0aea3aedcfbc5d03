"""Short, secret-redacted previews of tool input for the audit log and for people.

Redaction is best effort and errs on the side of hiding: it removes values of
``NAME=value`` / ``NAME: value`` / ``--name value`` where the name looks like a
credential, ``Authorization`` headers, bearer/basic credentials, passwords in
URLs, private key blocks and well-known token shapes. It cannot recognise a
secret that looks like ordinary text; the payload hash, not the preview, is
what binds evidence to an action.
"""

from __future__ import annotations

import re

from audit._errors import UsageError

__all__ = ["REDACTED", "redact_preview"]

REDACTED = "[REDACTED]"

_NAME = (
    r"[A-Za-z0-9_.-]*"
    r"(?:key|token|secret|passw(?:or)?d|passphrase|pass|pwd|credential|auth|cookie|session"
    r"|private|signature|sig)"
    r"[A-Za-z0-9_.-]*"
)
# Never re-redact a value that is already "[REDACTED]" (redaction is idempotent).
_VALUE = r"""(?!\[REDACTED)(?:"[^"\n]*"?|'[^'\n]*'?|[^\s"'&;|,)}\]]+)"""

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
    # user:password@ in URLs.
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@"),
        r"\1" + REDACTED + "@",
    ),
    # "api_key": "value" (JSON and friends).
    (
        re.compile(r'(?i)("' + _NAME + r'"\s*:\s*)"(?:[^"\\\n]|\\.)*"?'),
        r'\1"' + REDACTED + '"',
    ),
    # --password value, --token=value, -p is too ambiguous and left alone.
    (re.compile(r"(?i)(--" + _NAME + r")(=|\s+)" + _VALUE), r"\1\2" + REDACTED),
    # API_KEY=value, export GITHUB_TOKEN=value, X-Api-Key: value.
    (
        re.compile(r"(?i)(?<![A-Za-z0-9_.-])(" + _NAME + r")(\s*=\s*|\s*:\s*)" + _VALUE),
        r"\1\2" + REDACTED,
    ),
    # Well-known token shapes, wherever they appear.
    (
        re.compile(
            r"\b(?:"
            r"sk-[A-Za-z0-9_-]{16,}"
            r"|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}"
            r"|glpat-[A-Za-z0-9_-]{20,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
            r"|AIza[0-9A-Za-z_-]{35}"
            r"|npm_[A-Za-z0-9]{30,}"
            r"|hf_[A-Za-z0-9]{30,}"
            r"|pypi-[A-Za-z0-9_-]{40,}"
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
            r")"
        ),
        REDACTED,
    ),
)

_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+")


def _redact(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return _SPACE.sub(" ", text).strip()


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
