"""The appender's size limits at their edges: the last size allowed and the first refused.

A record line may be ``MAX_LINE_BYTES`` long (line feed included); a head file may be
64 KiB. A record 0 that is not a genesis record names no log id, and nothing is signed
over it even when a head vouches for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from freezegun import freeze_time

from audit import LogIntegrityError, RecordTooLargeError
from audit._records.chain import MAX_HEAD_BYTES
from audit.log import AuditLog
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, checkpoint_head, executed, legacy_head

_DATA = {"planner": "p", "decision": "d", "reasons": ["r" * 500] * 8}


@freeze_time("2026-11-22T01:00:00.000Z")
def test_a_record_line_of_exactly_the_limit_is_written_and_one_byte_more_is_refused(
    log_path: Path, signer: FixedSigner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The models keep real records far below MAX_LINE_BYTES; lower it to reach the edge.
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("planner.reported", _DATA)
        size = len(log_path.read_bytes().splitlines(keepends=True)[-1])  # seq 1: same length

        monkeypatch.setattr("audit._writing.log.MAX_LINE_BYTES", size)
        written = log.append("planner.reported", _DATA)
        assert len(written.to_line()) == size

        monkeypatch.setattr("audit._writing.log.MAX_LINE_BYTES", size - 1)
        before = log_path.read_bytes()
        with pytest.raises(RecordTooLargeError) as err:
            log.append("planner.reported", _DATA)
    assert (err.value.event, err.value.size, err.value.limit) == (
        "planner.reported",
        size,
        size - 1,
    )
    assert str(err.value) == (
        f"audit event 'planner.reported': record is {size} bytes, the limit is {size - 1}"
    )
    assert log_path.read_bytes() == before


def _padded_head(log_path: Path, signer: FixedSigner, size: int) -> bytes:
    """A valid old-format head padded with spaces inside its JSON to ``size`` bytes."""
    head = legacy_head(log_path, signer).rstrip(b"\n")
    return head[:-1] + b" " * (size - len(head)) + b"}"


@pytest.mark.parametrize("size", [MAX_HEAD_BYTES - 1, MAX_HEAD_BYTES])
def test_a_head_of_up_to_64_kib_is_read_whole(
    log_path: Path, signer: FixedSigner, size: int
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("a"))
    log_path.with_name("audit.jsonl.head").write_bytes(_padded_head(log_path, signer, size))
    with AuditLog.open(log_path, signer, signer.keys) as log:
        rec = log.append("tool.executed", executed("b"))
    assert rec.seq == 2


def test_a_head_over_64_kib_is_refused(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("a"))
    head = _padded_head(log_path, signer, MAX_HEAD_BYTES + 1)
    log_path.with_name("audit.jsonl.head").write_bytes(head)
    content = log_path.read_bytes()
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert err.value.kind == "head-malformed"
    assert log_path.read_bytes() == content


@pytest.mark.parametrize("head", ["checkpoint", "old-format"])
def test_nothing_is_signed_over_a_record_0_that_is_not_a_genesis_record(
    log_path: Path, signer: FixedSigner, head: str
) -> None:
    body = {
        "seq": 0,
        "ts": "2026-11-22T01:00:00.000Z",
        "event": "tool.executed",
        "data": executed("c"),
        "prev": "sha256:" + "0" * 64,
    }
    line = canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"
    log_path.parent.mkdir()
    log_path.write_bytes(line)
    if head == "checkpoint":
        origin = "pi-operator-guard/audit/log_abcdefghijklmnopqrstuvwx"
        signed = checkpoint_head(log_path, signer, origin=origin)
    else:
        signed = legacy_head(log_path, signer)
    log_path.with_name("audit.jsonl.head").write_bytes(signed)

    # A checkpoint signs only the lines' hashes, so that log opens and the first append
    # finds no log id; an old-format head signs a chain, which is checked from record 0.
    with (
        pytest.raises(LogIntegrityError) as err,
        AuditLog.open(log_path, signer, signer.keys) as log,
    ):
        log.append("tool.executed", executed("refused"))
    assert err.value.path == str(log_path)
    detail = {
        "checkpoint": "record 0 names no log id",
        "old-format": "line 1: record 0 is not a log.created event",
    }[head]
    assert (err.value.kind, err.value.detail) == ("genesis-invalid", detail)
    assert log_path.read_bytes() == line
    assert log_path.with_name("audit.jsonl.head").read_bytes() == signed
