"""Primitives the layers above share, defined once: strict JSON, timestamps, base64url,
the pydantic wire config, shared wire types and :func:`shorten` for error messages.

Other packages import these from ``audit``, never from this module. ``planning`` may not
import ``audit`` at all; it takes already-decoded JSON instead. :func:`shorten` is defined
in :mod:`audit._errors` (which every module here needs, so it cannot import this one) and
re-exported from here.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NoReturn

from pydantic import AfterValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from audit._errors import JsonInputError, UsageError, shorten

__all__ = [
    "ISO_MILLIS_RE",
    "MAX_INT_DIGITS",
    "MAX_JSON_BYTES",
    "WIRE_CONFIG",
    "ActionKind",
    "EvidenceId",
    "GrantId",
    "IsoMillis",
    "KeyId",
    "Origin",
    "Sha256",
    "Signature",
    "b64url_decode",
    "b64url_encode",
    "format_iso",
    "load_json",
    "parse_iso",
    "shorten",
    "utc_now",
]

# -- strict JSON --------------------------------------------------------------------------------

MAX_JSON_BYTES = 1 << 20
"""Default size limit of :func:`load_json`, in UTF-8 bytes."""
MAX_INT_DIGITS = 400
"""Default digit limit of an integer literal: parsing one is quadratic in its length."""


def _refuse(code: str, problem: str, value: object = None) -> NoReturn:
    raise JsonInputError(code, problem, None if value is None else shorten(value, 40))


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            _refuse("duplicate-key", "duplicate key", key)
        out[key] = value
    return out


def _constant(name: str) -> NoReturn:
    _refuse("non-finite-number", "NaN and Infinity are not JSON", name)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        _refuse("number-out-of-range", "number out of range", text)
    return value


def load_json(
    text: str | bytes,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_int_digits: int = MAX_INT_DIGITS,
) -> Any:
    """Decode one JSON text strictly; raise :class:`audit.JsonInputError` on anything else.

    Refused (``code``): over ``max_bytes`` UTF-8 bytes (``too-large``), bytes that are not
    UTF-8 or a str with lone surrogates (``not-utf8``), syntax errors and a byte order mark
    (``invalid-json``), duplicate object keys (``duplicate-key``), NaN/Infinity
    (``non-finite-number``), integers over ``max_int_digits`` digits (``number-too-long``),
    floats that overflow (``number-out-of-range``) and nesting deeper than the parser's
    recursion allows (``too-deep``). Nothing but :class:`audit.JsonInputError` escapes.
    """
    if isinstance(text, str):
        # Every code point takes at least one UTF-8 byte: a cheap first bound.
        if len(text) > max_bytes:
            _refuse("too-large", f"larger than {max_bytes} bytes")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            _refuse("not-utf8", f"not valid Unicode (lone surrogate at character {exc.start})")
    elif isinstance(text, bytes | bytearray | memoryview):
        data = bytes(text)
        size = len(data)
        if size <= max_bytes:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                _refuse("not-utf8", f"not valid UTF-8 at byte {exc.start}")
    else:
        _refuse("invalid-json", "JSON must be text or bytes", type(text).__name__)
    if size > max_bytes:
        _refuse("too-large", f"larger than {max_bytes} bytes")

    def bounded_int(digits: str) -> int:
        if len(digits) - digits.startswith("-") <= max_int_digits:
            try:
                return int(digits)
            except ValueError:  # past sys.get_int_max_str_digits(), a bound set too high
                pass
        _refuse("number-too-long", f"number longer than {max_int_digits} digits", digits)

    try:
        return json.loads(
            text,
            object_pairs_hook=_object,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=bounded_int,
        )
    except json.JSONDecodeError as exc:
        _refuse("invalid-json", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    except RecursionError:  # CPython's parser recurses once per nesting level
        _refuse("too-deep", "nested too deeply")


# -- timestamps ---------------------------------------------------------------------------------

_ISO_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
ISO_MILLIS_RE = re.compile(_ISO_PATTERN[1:-1])
"""The shape of a wire timestamp; use ``fullmatch`` (package-internal, not re-exported)."""


def utc_now() -> datetime:
    """The current time, UTC, truncated to milliseconds (what the wire can carry)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


def format_iso(moment: datetime) -> str:
    """``2026-11-22T01:00:00.000Z`` (RFC 3339 section 5.6, UTC, milliseconds)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(text: str, what: str = "timestamp") -> datetime:
    """Parse exactly the form :func:`format_iso` writes; else :class:`audit.UsageError`."""
    if not isinstance(text, str) or ISO_MILLIS_RE.fullmatch(text) is None:
        raise UsageError(what, "must be UTC RFC 3339 with milliseconds and Z", text)
    try:
        # The regex fixed the shape; fromisoformat is ~10x cheaper than strptime.
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(what, "is not a real date and time", text) from None


def _real_instant(text: str) -> str:
    try:
        datetime.fromisoformat(text[:-1])
    except ValueError:
        raise ValueError("is not a real date and time") from None
    return text


IsoMillis = Annotated[str, Field(pattern=_ISO_PATTERN), AfterValidator(_real_instant)]
"""A timestamp on the wire: the form :func:`format_iso` writes, and a real date."""

# -- base64url ----------------------------------------------------------------------------------


def b64url_encode(data: bytes) -> str:
    """Unpadded base64url (RFC 4648 section 5)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str, expected_len: int) -> bytes | None:
    """Decode canonical unpadded base64url of exactly ``expected_len`` bytes, else ``None``.

    Canonical means re-encoding gives the same text: padding, whitespace,
    non-alphabet characters and non-zero trailing bits are all refused.
    """
    if not isinstance(text, str) or not text.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) != expected_len or b64url_encode(raw) != text:
        return None
    return raw


# -- the pydantic wire config and shared wire types ---------------------------------------------

WIRE_CONFIG = ConfigDict(
    strict=True,
    extra="forbid",
    frozen=True,
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
    defer_build=True,
)
"""Every wire model: strict, closed, frozen; snake_case in Python, camelCase on the wire.

Its validator and serializer are built on first use, not at import: a process (a CLI command,
the sidecar answering ``health``) pays only for the models it touches."""

ActionKind = Literal["destructive", "protected"]
"""What a confirmation is about (a local-safe call needs none)."""
Origin = Literal[
    "runtime-ui-confirm", "operator-contract-review", "runtime-effects-confirm", "runtime-grant"
]
"""Where the operator's answer came from (``runtime-grant``: a call covered by a scoped grant
the operator gave in an earlier dialog, not a dialog of its own)."""
Sha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
KeyId = Annotated[str, Field(pattern=r"^ed25519:[0-9a-f]{64}$")]
Signature = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{86}$")]
"""Unpadded base64url of a 64-byte Ed25519 signature."""
EvidenceId = Annotated[str, Field(pattern=r"^oce_[A-Za-z0-9_-]{22,64}$")]
"""``oce_`` + unpadded base64url of at least 128 random bits (minted: 16 bytes, 22 chars)."""
GrantId = Annotated[str, Field(pattern=r"^grant_[A-Za-z0-9_-]{22}$")]
"""``grant_`` + unpadded base64url of 128 random bits (16 bytes, 22 chars): a scoped grant."""
