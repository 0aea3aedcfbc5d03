"""``read_records``: what it reports for a bad line, and that it reads a snapshot.

Faults carry the path, the 1-based line, a reason code and a detail. The log is read as
it was when reading began: records appended meanwhile are not returned, and a torn last
line stays torn even if bytes are added to it later. The signed head is not read at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit import LogFormatError
from audit.log import AuditLog
from audit.verify import read_records
from audit.wire import AuditRecord, canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, executed


def _fill(path: Path, signer: FixedSigner, count: int, start: int = 0) -> list[AuditRecord]:
    with AuditLog.open(path, signer, signer.keys) as log:
        return [
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
            for i in range(start, start + count)
        ]


def _fault(path: Path) -> LogFormatError:
    with pytest.raises(LogFormatError) as err:
        list(read_records(path))
    assert err.value.path == str(path)
    return err.value


@pytest.mark.parametrize(
    ("content", "kind", "detail"),
    [
        (b"{", "torn-line", "the last line has no line feed"),
        (b"\n", "malformed-line", "not valid UTF-8 JSON"),
        (b"{}", "torn-line", "the last line has no line feed"),
    ],
)
def test_a_log_of_a_byte_or_two_is_read_and_refused(
    tmp_path: Path, content: bytes, kind: str, detail: str
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    err = _fault(path)
    assert (err.line, err.kind, err.detail) == (1, kind, detail)


def test_an_empty_log_has_no_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    assert list(read_records(path)) == []


def test_a_torn_last_line_is_reported_at_its_line(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 3)
    with log_path.open("ab") as handle:
        handle.write(b'{"data":{"toolCallId":"c')
    err = _fault(log_path)
    assert (err.line, err.kind, err.detail) == (5, "torn-line", "the last line has no line feed")
    assert str(err) == f"{log_path}: line 5: torn-line: the last line has no line feed"


def test_a_line_fault_keeps_its_detail(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 3)
    lines = log_path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"call-1", b"call-7")
    log_path.write_bytes(b"".join(lines))
    err = _fault(log_path)
    assert (err.line, err.kind) == (3, "hash-mismatch")
    assert err.detail == "the stored hash does not match the record"


def _forged_next(path: Path, **fields: Any) -> bytes:
    """A well-formed record chained after the log's last one, with ``fields`` set."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    body = {
        "seq": last["seq"] + 1,
        "ts": last["ts"],
        "event": "tool.executed",
        "data": {},
        "prev": last["hash"],
        **fields,
    }
    return canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"


@pytest.mark.parametrize(
    "fields",
    [
        {"ts": "2026-02-30T01:00:00.000Z"},  # the form of a time, but no such day
        {"event": "e" * 129},  # longer than an event name may be
    ],
)
def test_a_chained_record_whose_fields_do_not_fit_the_model_is_refused(
    log_path: Path, signer: FixedSigner, fields: dict[str, Any]
) -> None:
    written = _fill(log_path, signer, 2)
    with log_path.open("ab") as handle:
        handle.write(_forged_next(log_path, **fields))
    reader = read_records(log_path)
    assert [next(reader) for _ in range(3)][1:] == written
    with pytest.raises(LogFormatError) as err:
        next(reader)
    assert err.value.path == str(log_path)
    assert (err.value.line, err.value.kind, err.value.detail) == (
        4,
        "malformed-line",
        "a field has the wrong type or form",
    )
    assert str(err.value) == (
        f"{log_path}: line 4: malformed-line: a field has the wrong type or form"
    )


def test_records_appended_while_reading_are_not_returned(
    log_path: Path, signer: FixedSigner
) -> None:
    written = _fill(log_path, signer, 3)
    reader = read_records(log_path)
    first = next(reader)
    later = _fill(log_path, signer, 2, start=3)
    rest = list(reader)
    assert [first, *rest][1:] == written
    assert list(read_records(log_path))[-2:] == later


def test_a_torn_line_completed_while_reading_is_still_torn(
    log_path: Path, signer: FixedSigner
) -> None:
    # The reader judges the bytes that were there when it began, not what came after.
    _fill(log_path, signer, 3)
    with log_path.open("ab") as handle:
        handle.write(b'{"data":')
    reader = read_records(log_path)
    assert next(reader).seq == 0
    with log_path.open("ab") as handle:
        handle.write(b'{"toolCallId":"c"}}\n')
    with pytest.raises(LogFormatError) as err:
        list(reader)
    assert (err.value.line, err.value.kind, err.value.detail) == (
        5,
        "torn-line",
        "the last line has no line feed",
    )


def test_a_head_that_cannot_be_read_does_not_stop_reading(
    log_path: Path, signer: FixedSigner
) -> None:
    written = _fill(log_path, signer, 2)
    head_path = log_path.with_name("audit.jsonl.head")
    head_path.unlink()
    head_path.mkdir()  # reading it would fail: read_records does not look at the head
    assert list(read_records(log_path))[1:] == written
