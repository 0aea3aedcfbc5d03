"""RFC 8785 (JSON Canonicalization Scheme) serialization and SHA-256 helpers.

The fast path hands the value to :func:`json.dumps` after one validating walk,
because for the values our wire shapes carry (strings, integers within the
IEEE 754 safe range, booleans, null, lists and string-keyed objects) the
standard library emits exactly the JCS bytes:

* strings: JCS (RFC 8785 section 3.2.2.2) escapes ``"``, ``\\``, and the C0
  controls, using ``\\b \\f \\n \\r \\t`` and lowercase ``\\u00xx`` for the rest,
  and writes every other code point literally; ``json.dumps(ensure_ascii=False)``
  does the same.
* integers within +/-(2**53 - 1) print identically in ECMAScript and Python.
* object members are sorted by their UTF-16 code units (RFC 8785 section 3.2.3); Python's
  ``sort_keys`` sorts by code point, which agrees unless a key holds a character
  above U+FFFF. The walk detects such keys and then sorts explicitly.

Anything else (floats, lone surrogates) goes to the reference ``rfc8785`` package,
which tests compare against the fast path on arbitrary input.

>>> canonical_json({"b": 1, "a": [True, None, "é"]})
b'{"a":[true,null,"\\xc3\\xa9"],"b":1}'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import rfc8785

from audit._errors import CanonicalizationError

__all__ = ["canonical_json", "sha256_hex", "sha256_prefixed"]

_INT_MAX = 2**53 - 1
_MAX_DEPTH = 64

_FAST = 0
_NEEDS_UTF16_SORT = 1
_NEEDS_REFERENCE = 2


def _walk(value: Any, depth: int) -> int:
    """Validate ``value`` and say which serializer can produce JCS bytes for it."""
    kind = type(value)
    if kind is str:
        return _FAST if value.isascii() or _is_well_formed(value) else _NEEDS_REFERENCE
    if kind is dict:
        if depth >= _MAX_DEPTH:
            raise CanonicalizationError("nesting-too-deep", f"deeper than {_MAX_DEPTH} levels")
        need = _FAST
        for key, item in value.items():
            if type(key) is not str:
                raise CanonicalizationError("non-string-key", key)
            if not key.isascii():
                if not _is_well_formed(key):
                    need = _NEEDS_REFERENCE
                elif need == _FAST and any(ord(ch) > 0xFFFF for ch in key):
                    need = _NEEDS_UTF16_SORT
            sub = _walk(item, depth + 1)
            if sub > need:
                need = sub
        return need
    if kind is int:
        if -_INT_MAX <= value <= _INT_MAX:
            return _FAST
        raise CanonicalizationError("integer-out-of-range", value)
    if value is None or kind is bool:
        return _FAST
    if kind is list or kind is tuple:
        if depth >= _MAX_DEPTH:
            raise CanonicalizationError("nesting-too-deep", f"deeper than {_MAX_DEPTH} levels")
        need = _FAST
        for item in value:
            sub = _walk(item, depth + 1)
            if sub > need:
                need = sub
        return need
    if kind is float:
        return _NEEDS_REFERENCE
    # Subclasses and other mappings/sequences: normalize to plain containers first.
    if isinstance(value, Mapping):
        return max(_walk(dict(value), depth), _NEEDS_UTF16_SORT)
    if isinstance(value, str):
        return _walk(str(value), depth)
    if isinstance(value, bool):
        return _FAST
    if isinstance(value, int):
        return _walk(int(value), depth)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return max(_walk(list(value), depth), _NEEDS_UTF16_SORT)
    raise CanonicalizationError("unsupported-type", kind.__name__)


def _is_well_formed(text: str) -> bool:
    # Lone surrogates cannot be encoded as UTF-8 and are not valid I-JSON (RFC 7493).
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be")


def _sorted_utf16(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted_utf16(value[k]) for k in sorted(value, key=_utf16_key)}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return [_sorted_utf16(v) for v in value]
    return value


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``value``.

    Raises :class:`audit.CanonicalizationError` for values JCS cannot represent
    (NaN, infinities, integers beyond 2**53 - 1, lone surrogates, non-string keys).
    """
    need = _walk(value, 0)
    if need == _NEEDS_REFERENCE:
        try:
            return rfc8785.dumps(value)
        except rfc8785.CanonicalizationError as exc:
            raise CanonicalizationError("not-canonicalizable", str(exc)) from None
        except (UnicodeEncodeError, ValueError) as exc:
            raise CanonicalizationError("not-canonicalizable", str(exc)) from None
    if need == _NEEDS_UTF16_SORT:
        return json.dumps(
            _sorted_utf16(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_prefixed(data: bytes) -> str:
    """``"sha256:" + hex`` of SHA-256 over ``data`` (the form every hash field uses)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
