"""The exact (reference) path of a log line's check, one refusal at a time.

``check_body_exact`` decides every line the fast path declines (and, in the property tests,
every line). Each field check is tried alone, on an otherwise correct, canonical, correctly
hashed line, so every condition must hold by itself; each refusal says which check failed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from audit._errors import LogLineError
from audit._records.chain import check_body_exact, check_parts
from audit.wire import canonical_json

GOOD: dict[str, Any] = {
    "seq": 0,
    "ts": "2026-11-23T10:00:00.000Z",
    "event": "log.created",
    "data": {"k": 1},
    "prev": "sha256:" + "0" * 64,
}


def line(**fields: Any) -> bytes:
    """A canonical line over ``GOOD`` with ``fields`` replaced, carrying its correct hash."""
    body = {**GOOD, **fields}
    digest = "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()
    return canonical_json({**body, "hash": digest})


def fault(body: bytes) -> tuple[str, str]:
    with pytest.raises(LogLineError) as raised:
        check_body_exact(body)
    return raised.value.kind, raised.value.detail


def test_a_correct_line_with_seq_0_is_accepted_as_it_is() -> None:
    body = line()
    record = check_body_exact(body)
    assert record == json.loads(body)
    assert record["seq"] == 0


def test_a_nested_key_named_hash_does_not_hide_the_record_hash() -> None:
    # The record's own hash field is the last ',"hash":"' of the line: data sorts first.
    body = line(data={"a": 1, "hash": "sha256:" + "f" * 64})
    assert check_body_exact(body)["data"]["hash"] == "sha256:" + "f" * 64
    assert check_parts(body)[2] == {"a": 1, "hash": "sha256:" + "f" * 64}


@pytest.mark.parametrize(
    "fields",
    [
        {"seq": "0"},
        {"seq": -1},
        {"seq": True},
        {"ts": 5},
        {"ts": "2026-11-23T10:00:00Z"},
        {"event": 7},
        {"event": ""},
        {"data": [1]},
        {"prev": None},
    ],
    ids=lambda f: "-".join(f"{k}={v!r}" for k, v in f.items()),
)
def test_each_field_of_the_wrong_type_or_form_is_refused_alone(fields: dict[str, Any]) -> None:
    assert fault(line(**fields)) == ("malformed-line", "a field has the wrong type or form")


def test_a_hash_that_is_not_a_string_is_refused() -> None:
    body = canonical_json({**GOOD, "hash": 12})
    assert fault(body) == ("malformed-line", "a field has the wrong type or form")


def test_bytes_that_are_not_json_are_refused() -> None:
    assert fault(b"\xff{") == ("malformed-line", "not valid UTF-8 JSON")
    assert fault(b'{"seq":') == ("malformed-line", "not valid UTF-8 JSON")


def test_hostile_nesting_is_refused_not_a_crash() -> None:
    assert fault(b"[" * 100_000 + b"]" * 100_000) == ("malformed-line", "JSON nested too deeply")


@pytest.mark.parametrize(
    "body",
    [b"[]", b"{}", json.dumps({**GOOD, "hash": "x", "extra": 1}).encode()],
)
def test_anything_but_the_six_fields_is_refused(body: bytes) -> None:
    assert fault(body) == (
        "malformed-line",
        "not an object with exactly seq, ts, event, data, prev, hash",
    )


def test_a_line_that_is_not_canonical_is_refused() -> None:
    spaced = line().replace(b'"seq":0', b'"seq": 0')
    assert fault(spaced) == ("malformed-line", "not in canonical JSON form")


def test_a_float_has_no_canonical_form_here() -> None:
    body = json.dumps({**GOOD, "data": {"x": float("inf")}, "hash": "h"}).encode()
    kind, detail = fault(body)
    assert kind == "malformed-line" and detail.startswith("no canonical form (")


def test_a_hash_that_json_escapes_is_not_a_sha256_value() -> None:
    # A quote in the value is written \" in the line, so the bytes after the mark differ.
    body = canonical_json({**GOOD, "hash": 'sha256:"x'})
    assert fault(body) == ("hash-mismatch", "the hash field is not a sha256 value")


def test_a_wrong_hash_is_a_mismatch() -> None:
    body = canonical_json({**GOOD, "hash": "sha256:" + "1" * 64})
    assert fault(body) == ("hash-mismatch", "the stored hash does not match the record")


@pytest.mark.parametrize("value", ['ab"', "sha256:ab\\"])
def test_a_hash_value_whose_bytes_are_not_the_line_bytes_is_not_a_sha256_value(value: str) -> None:
    # 'ab"' is written ab\" : the bytes differ though a quote follows where the value ends;
    # 'sha256:ab\' is written ab\\ : the bytes agree but no quote follows.
    body = canonical_json({**GOOD, "hash": value})
    assert fault(body) == ("hash-mismatch", "the hash field is not a sha256 value")
