"""The shared primitives: strict JSON loading, timestamps, base64url and ``shorten``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import audit
from audit import CanonicalizationError, JsonInputError, UsageError, shorten
from audit.wire import (
    IsoMillis,
    b64url_decode,
    b64url_encode,
    canonical_json,
    format_iso,
    load_json,
    parse_iso,
)

HUGE = "9" * 5000  # past Python's 4300-digit int() limit: the live bug


def code_of(text: str | bytes, **limits: int) -> str:
    with pytest.raises(JsonInputError) as caught:
        load_json(text, **limits)
    assert "\n" not in str(caught.value)
    return caught.value.code


def test_one_error_type_under_the_audit_base() -> None:
    assert issubclass(JsonInputError, audit.AuditError)


# -- load_json ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 1, "a": 2}', "duplicate-key"),
        ('{"x": {"a": 1, "a": 1}}', "duplicate-key"),
        ('{"x": NaN}', "non-finite-number"),
        ("[Infinity]", "non-finite-number"),
        ("-Infinity", "non-finite-number"),
        ('{"x": 1e400}', "number-out-of-range"),
        ("-1e999", "number-out-of-range"),
        ('{"x": ' + HUGE + "}", "number-too-long"),
        ("-" + HUGE, "number-too-long"),
        ("[" + "1" * 401 + "]", "number-too-long"),
        ("[" * 100_000 + "]" * 100_000, "too-deep"),
        ('{"x": 1', "invalid-json"),
        ("", "invalid-json"),
        ("{} {}", "invalid-json"),
        ("{'a': 1}", "invalid-json"),
        ("\ufeff{}", "invalid-json"),
        (b"\xef\xbb\xbf{}", "invalid-json"),
        (b'{"a": "\xff"}', "not-utf8"),
        ('{"a": "\ud800"}', "not-utf8"),
    ],
)
def test_refusals_have_one_error_type_and_a_code(text: str | bytes, code: str) -> None:
    assert code_of(text, max_bytes=10**6) == code


def test_the_limits_are_parameters() -> None:
    assert load_json("[" + "1" * 400 + "]") == [int("1" * 400)]
    assert code_of("[123]", max_int_digits=2) == "number-too-long"
    assert load_json("[-12]", max_int_digits=2) == [-12]
    # A bound past Python's own int() limit still gives our error, never a ValueError.
    assert code_of("[" + HUGE + "]", max_int_digits=10_000) == "number-too-long"
    assert load_json("{}", max_bytes=2) == {}
    assert code_of("{} ", max_bytes=2) == "too-large"
    assert code_of(b"{} ", max_bytes=2) == "too-large"
    # The limit counts UTF-8 bytes, not code points.
    assert code_of('"éé"', max_bytes=5) == "too-large"


def test_the_error_names_the_offending_piece_shortly() -> None:
    with pytest.raises(JsonInputError) as caught:
        load_json('{"' + "k" * 500 + '": 1, "' + "k" * 500 + '": 2}')
    assert caught.value.problem == "duplicate key"
    assert caught.value.value is not None and len(caught.value.value) <= 40
    with pytest.raises(JsonInputError) as caught:
        load_json(HUGE)
    assert caught.value.value is not None and "…" in caught.value.value


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_every_json_value_round_trips(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert load_json(text) == value
    assert load_json(text.encode("utf-8")) == value


@settings(max_examples=500, deadline=None)
@given(
    raw=st.text(max_size=300)
    | st.binary(max_size=300)
    | st.builds(lambda d: "[" + "9" * d + "]", st.integers(0, 6000))
    | st.builds(lambda d: "[1e" + "9" * d + "]", st.integers(0, 30))
)
def test_any_input_decodes_or_raises_only_json_input_error(raw: str | bytes) -> None:
    refused: JsonInputError | None = None
    try:
        value = load_json(raw)
    except JsonInputError as exc:
        refused = exc
    if refused is not None:
        assert "\n" not in str(refused)
        return
    # What decodes has a canonical form, or is refused with our error (I-JSON range).
    problem: CanonicalizationError | None = None
    try:
        canonical_json(value)
    except CanonicalizationError as exc:
        problem = exc
    assert problem is None or problem.code in ("integer-out-of-range", "not-canonicalizable")


# -- canonical JSON of huge integers --------------------------------------------------------------


@pytest.mark.parametrize(
    "number", [2**53, 10**30, 10**5000, -(10**5000)], ids=["2^53", "1e30", "1e5000", "-1e5000"]
)
def test_integers_outside_i_json_are_our_error_not_a_value_error(number: int) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonical_json({"nested": [{"x": number}]})
    assert caught.value.code == "integer-out-of-range"
    assert len(str(caught.value)) < 300


# -- shorten --------------------------------------------------------------------------------------


def test_shorten_keeps_both_ends_on_one_line() -> None:
    path = "/srv/project/" + "deep/" * 100 + "secret-file.txt"
    short = shorten(path, 60)
    assert len(short) == 60
    assert short.startswith("/srv/project/")
    assert short.endswith("secret-file.txt")
    assert "…" in short
    assert shorten("a\nb\r\tc\x1b\u2028", 100) == "a\\nb\\r\\tc\\u001b\\u2028"
    assert shorten("short", 100) == "short"
    assert shorten(["x"], 100) == "['x']"


@pytest.mark.parametrize(
    "value", [10**5000, [10**5000], {"x": -(10**5000)}], ids=["int", "list", "dict"]
)
def test_shorten_never_raises_on_values_without_a_repr(value: object) -> None:
    text = shorten(value, 80)
    assert 0 < len(text) <= 80
    assert "\n" not in text


@settings(max_examples=300, deadline=None)
@given(value=st.text() | json_values, limit=st.integers(1, 200))
def test_shorten_is_bounded_and_one_line(value: object, limit: int) -> None:
    text = shorten(value, limit)
    assert len(text) <= max(limit, 8)
    assert "\n" not in text and "\r" not in text


# -- timestamps -----------------------------------------------------------------------------------


def test_format_and_parse_round_trip_at_millisecond_precision() -> None:
    moment = datetime(2026, 11, 22, 1, 0, 0, 123_456, tzinfo=UTC)
    text = format_iso(moment)
    assert text == "2026-11-22T01:00:00.123Z"
    assert parse_iso(text) == moment.replace(microsecond=123_000)


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-22T01:00:00Z",
        "2026-11-22T01:00:00.000+00:00",
        "2026-11-22T01:00:00.000Z\n",
        "2026-13-45T01:00:00.000Z",
        "２０２６-11-22T01:00:00.000Z",
        "",
    ],
)
def test_only_the_one_wire_form_is_a_timestamp(text: str) -> None:
    class Stamp(BaseModel):
        ts: IsoMillis

    with pytest.raises(UsageError):
        parse_iso(text, "ts")
    with pytest.raises(ValidationError):
        Stamp(ts=text)


# -- base64url ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=80))
def test_b64url_round_trips(data: bytes) -> None:
    assert b64url_decode(b64url_encode(data), len(data)) == data


@pytest.mark.parametrize(
    "text",
    ["AB", "AA==", "AA AA", "AA+/", "ÄA", "AAA"],  # AB: non-zero trailing bits
)
def test_b64url_decode_is_canonical_and_length_checked(text: str) -> None:
    assert b64url_decode(text, 1) is None
    assert b64url_decode(b64url_encode(b"\x00"), 2) is None


# -- the log's own line parser ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"data":{},"data":{}}',
        b'{"data":{"x":NaN}}',
        b'{"data":{"x":1e400}}',
        b'{"data":{"x":' + HUGE.encode() + b"}}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"data":{"x":"\xff"}}',
    ],
    ids=["duplicate", "nan", "overflow", "huge-int", "deep", "not-utf8"],
)
def test_log_lines_refuse_what_load_json_refuses_without_its_cost(body: bytes) -> None:
    # audit/_records/chain.py keeps plain json.loads: a line must equal the canonical JSON of what
    # it parses to, which already rules all of these out, and the hooks would cost ~70%.
    from audit._records.chain import LogLineError, check_body

    with pytest.raises(LogLineError) as caught:
        check_body(body)
    assert caught.value.kind == "malformed-line"
