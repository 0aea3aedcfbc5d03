"""The verifier's fast path decides every line exactly as the reference path does.

``check_body`` proves canonical form by decoding with msgspec and re-encoding with sorted
keys; ``check_body_exact`` uses the standard library and our RFC 8785 serializer. Every
line the fast path accepts must be accepted by the exact path with the same record, and
everything else goes to the exact path anyway.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from audit._errors import AuditError, LogLineError
from audit._records.chain import check_body, check_body_exact
from audit.wire import canonical_json

_TS = "2026-11-23T10:00:00.000Z"


def _outcome(fn: Any, body: bytes) -> tuple[str, Any]:
    try:
        return "ok", fn(body)
    except LogLineError as fault:
        return "fault", (fault.kind, fault.detail)


def _line(data: Any, *, hash_ok: bool = True) -> bytes:
    body = {
        "seq": 1,
        "ts": _TS,
        "event": "tool.executed",
        "data": data,
        "prev": "sha256:" + "a" * 64,
    }
    try:
        digest = "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()
    except AuditError:
        digest = "sha256:" + "b" * 64
    if not hash_ok:
        digest = "sha256:" + "c" * 64
    try:
        return canonical_json({**body, "hash": digest})
    except AuditError:
        return json.dumps({**body, "hash": digest}, ensure_ascii=False, sort_keys=True).encode()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.booleans())
def test_fast_and_exact_agree_on_records_with_any_data(data: dict[str, Any], hash_ok: bool) -> None:
    body = _line(data, hash_ok=hash_ok)
    assert _outcome(check_body, body) == _outcome(check_body_exact, body)


@given(st.binary(max_size=300))
def test_fast_and_exact_agree_on_any_bytes(body: bytes) -> None:
    assert _outcome(check_body, body) == _outcome(check_body_exact, body)


@given(st.data())
def test_fast_and_exact_agree_on_edited_lines(data: st.DataObject) -> None:
    body = _line({"command": "ls -la", "n": 5, "list": [1, "x", None]})
    at = data.draw(st.integers(0, len(body) - 1))
    op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
    if op == "flip":
        edited = (
            body[:at] + bytes([body[at] ^ (1 << data.draw(st.integers(0, 7)))]) + body[at + 1 :]
        )
    elif op == "insert":
        edited = (
            body[:at]
            + data.draw(st.sampled_from([b" ", b"\\u0041", b"1.0", b'"', b"\xf0\x9f\x98\x80"]))
            + body[at:]
        )
    else:
        edited = body[:at] + body[at + data.draw(st.integers(1, 8)) :]
    assert _outcome(check_body, edited) == _outcome(check_body_exact, edited)


def test_domain_edges_take_the_exact_path_and_agree() -> None:
    cases = [
        _line({"n": 2**53 - 1}),
        _line({"n": 2**53}),
        _line({"n": -(2**53)}),
        _line({"f": 1.5}),
        _line({"f": 1e21}),
        _line({"k\U0001f600": 1, "k\ufb01": 2}),
        _line({"s": "\x00\x1f\x7f\u2028"}),
        _line({"s": "é"}),
        _line({"b": True, "z": None}),
        _line({"dup": 1}).replace(b'{"dup":1}', b'{"dup":1,"dup":1}'),
        _line({}).replace(b'"seq":1', b'"seq":01'),
        _line({}).replace(b'"seq":1', b'"seq":true'),
        _line({"s": "x"}).replace(b'"x"', b'"\\u0078"'),
        _line({"s": "x"}).replace(b'"x"', b'"\\ud800"'),
    ]
    for body in cases:
        assert _outcome(check_body, body) == _outcome(check_body_exact, body), body
    assert _outcome(check_body, cases[0])[0] == "ok"


def _line_in_code_point_order(data: dict[str, Any]) -> bytes:
    """A record line with its keys sorted by code point (Python's and msgspec's order), and
    a hash over exactly those bytes."""
    body = {
        "seq": 1,
        "ts": _TS,
        "event": "tool.executed",
        "data": data,
        "prev": "sha256:" + "a" * 64,
    }

    def dump(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()

    return dump({**body, "hash": "sha256:" + hashlib.sha256(dump(body)).hexdigest()})


def test_keys_in_code_point_order_are_not_canonical_where_utf16_order_differs() -> None:
    # RFC 8785 section 3.2.3 sorts keys by UTF-16 code units: U+1F600 (D83D DE00) comes
    # before U+FB01, while code point order puts it after. msgspec sorts by code point, so
    # the fast path must leave every line with a character above U+FFFF to the exact path.
    data = {"k\U0001f600": 1, "k\ufb01": 2}
    body = _line_in_code_point_order(data)
    assert body.index("k\ufb01".encode()) < body.index("k\U0001f600".encode())
    assert _outcome(check_body_exact, body) == _outcome(check_body, body)
    assert _outcome(check_body, body)[0] == "fault"
    # Where the two orders agree, the same construction is canonical and accepted.
    assert _outcome(check_body, _line_in_code_point_order({"a\U0001f600": 1, "b": 2}))[0] == "ok"


def _self_hashed(
    body: dict[str, Any],
    *,
    sort_keys: bool,
    separators: tuple[str, str],
    prefix: str = "sha256:",
) -> bytes:
    """A record line dumped as asked, with ``hash`` last and over exactly its other bytes."""

    def dump(value: Any) -> bytes:
        return json.dumps(
            value, sort_keys=sort_keys, ensure_ascii=False, separators=separators
        ).encode()

    digest = prefix + hashlib.sha256(dump(body)).hexdigest()
    line = dump({**body, "hash": digest})
    assert line.rfind(b',"hash":"') > 0  # the span the fast path hashes around
    return line


_BODY = {
    "seq": 1,
    "ts": _TS,
    "event": "tool.executed",
    "data": {"n": 1},
    "prev": "sha256:" + "a" * 64,
}


def test_a_line_not_in_canonical_form_is_refused_though_its_hash_is_right() -> None:
    for line in [
        _self_hashed(_BODY, sort_keys=False, separators=(",", ":")),  # keys out of order
        _self_hashed({**_BODY, "data": {"b": 1, "a": 2}}, sort_keys=False, separators=(",", ":")),
    ]:
        assert _outcome(check_body, line) == _outcome(check_body_exact, line)
        assert _outcome(check_body, line)[0] == "fault", line


def test_a_canonical_line_with_a_timestamp_not_in_milliseconds_is_refused() -> None:
    for ts in ["2026-11-23T10:00:00Z", "2026-11-23T10:00:00.000000Z", "2026-11-23 10:00:00.000Z"]:
        line = _self_hashed({**_BODY, "ts": ts}, sort_keys=True, separators=(",", ":"))
        assert _outcome(check_body, line) == _outcome(check_body_exact, line)
        assert _outcome(check_body, line)[0] == "fault", ts
    line = _self_hashed(_BODY, sort_keys=True, separators=(",", ":"))
    assert _outcome(check_body, line)[0] == "ok"  # the same line with its milliseconds


def test_a_hash_with_the_right_digest_under_another_prefix_is_refused() -> None:
    for prefix in ["SHA256:", "sha-256:", "sha512:", ""]:
        line = _self_hashed(_BODY, sort_keys=True, separators=(",", ":"), prefix=prefix)
        assert _outcome(check_body, line) == _outcome(check_body_exact, line)
        assert _outcome(check_body, line)[0] == "fault", prefix
