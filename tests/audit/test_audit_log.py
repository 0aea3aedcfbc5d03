"""The appender: record format, head, durability hooks, validation and crash recovery."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from freezegun import freeze_time

from audit import (
    EventDataError,
    LogClosedError,
    LogFormatError,
    LogIntegrityError,
    LogNotFoundError,
    RecordTooLargeError,
    ReservedEventError,
    SignerError,
    UnknownEventError,
)
from audit.log import AuditLog
from audit.tlog import leaf_hash, node_hash
from audit.verify import read_records, verify_log
from audit.wire import (
    LOG_SCHEMA,
    MAX_OPERATOR_REASON_CHARS,
    AuditRecord,
    canonical_json,
    genesis_hash,
    sha256_prefixed,
)
from tests.audit.audit_testkit import FixedSigner, executed, keyring, phash


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _fill(path: Path, signer: FixedSigner, count: int) -> list[AuditRecord]:
    with AuditLog.open(path, signer, signer.keys) as log:
        return [
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}")) for i in range(count)
        ]


# -- format ---------------------------------------------------------------------


@freeze_time("2026-11-22T01:00:00.123456Z")
def test_new_log_has_genesis_record_and_signed_head(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        rec = log.append("key.generated", {"keyId": signer.key_id})
        assert log.head_path == log_path.with_name("audit.jsonl.head")

    raw = log_path.read_bytes()
    assert raw.endswith(b"\n")
    first, second = _lines(log_path)
    assert first["seq"] == 0
    assert first["event"] == "log.created"
    assert first["data"]["schema"] == LOG_SCHEMA
    assert first["prev"] == genesis_hash(first["data"]["logId"])
    assert first["ts"] == "2026-11-22T01:00:00.123Z"
    assert second == rec.model_dump(mode="json")
    assert second["prev"] == first["hash"]
    for line, obj in zip(raw.splitlines(), (first, second), strict=True):
        assert line == canonical_json(obj)
        without = {k: v for k, v in obj.items() if k != "hash"}
        assert obj["hash"] == sha256_prefixed(canonical_json(without))

    # The head is a C2SP checkpoint: origin, size, Merkle root of the exact lines, signature.
    note = log_path.with_name("audit.jsonl.head").read_bytes()
    text, _, signature_line = note.partition(b"\n\n")
    leaves = [leaf_hash(line) for line in raw.splitlines()]
    assert text.split(b"\n") == [
        f"pi-operator-guard/audit/{first['data']['logId']}".encode(),
        b"2",
        base64.b64encode(node_hash(leaves[0], leaves[1])),
    ]
    blob = base64.b64decode(signature_line.split(b" ")[2])
    signer.public_key.verify(blob[4:], text + b"\n")
    assert verify_log(log_path, keys).decision == "intact"


def test_creates_private_parents_and_file(tmp_path: Path, signer: FixedSigner) -> None:
    path = tmp_path / "a" / "b" / "audit.jsonl"
    AuditLog.open(path, signer, signer.keys).close()
    for directory in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.with_name("audit.jsonl.head").stat().st_mode) == 0o600


def test_reopen_continues_the_chain(log_path: Path, signer: FixedSigner) -> None:
    first = _fill(log_path, signer, 3)
    second = _fill(log_path, signer, 2)
    assert [r.seq for r in first + second] == [1, 2, 3, 4, 5]
    assert second[0].prev == first[-1].hash
    records = list(read_records(log_path))
    assert [r.seq for r in records] == list(range(6))
    assert sum(r.event == "log.created" for r in records) == 1


def test_timestamps_are_utc_millis(log_path: Path, signer: FixedSigner) -> None:
    with (
        freeze_time("2026-11-22T03:04:05.999999+02:00"),
        AuditLog.open(log_path, signer, signer.keys) as log,
    ):
        rec = log.append("tool.executed", executed("c1"))
    assert rec.ts == "2026-11-22T01:04:05.999Z"
    assert rec.timestamp.isoformat() == "2026-11-22T01:04:05.999000+00:00"


def test_data_is_stored_camel_case_without_nulls(log_path: Path, signer: FixedSigner) -> None:
    snake = {
        "tool_call_id": "c1",
        "tool_name": "write",
        "is_error": True,
        "action_kind": "protected",
        "payload_hash": phash("x"),
        "path": "/w/.env",
        "scope": None,
    }
    with AuditLog.open(log_path, signer, signer.keys) as log:
        rec = log.append("tool.executed", snake)
    assert rec.data == {
        "toolCallId": "c1",
        "toolName": "write",
        "isError": True,
        "actionKind": "protected",
        "payloadHash": phash("x"),
        "path": "/w/.env",
    }


def test_preview_is_redacted_and_can_be_turned_off(log_path: Path, signer: FixedSigner) -> None:
    data = {**executed("c1"), "preview": "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwx git push"}
    with AuditLog.open(log_path, signer, signer.keys) as log:
        kept = log.append("tool.executed", data)
    with AuditLog.open(log_path, signer, signer.keys, previews=False) as log:
        dropped = log.append("tool.executed", data)
    assert kept.data["preview"] == "GITHUB_TOKEN=[REDACTED] git push"
    assert "preview" not in dropped.data
    assert b"ghp_" not in log_path.read_bytes()


def test_an_operator_reason_is_redacted_bounded_and_kept_without_previews(
    log_path: Path, signer: FixedSigner
) -> None:
    declined = {
        "reason": "declined",
        "actionKind": "destructive",
        "toolName": "bash",
        "payloadHash": phash("x"),
    }
    said = "wrong\tdir API_KEY=s3cr3t " + "x" * 400
    with AuditLog.open(log_path, signer, signer.keys, previews=False) as log:
        kept = log.append("confirmation.declined", {**declined, "operatorReason": said})
        blank = log.append("confirmation.declined", {**declined, "operatorReason": " \n "})
    reason = kept.data["operatorReason"]
    assert reason.startswith("wrong dir API_KEY=[REDACTED] xxx")
    assert len(reason) == MAX_OPERATOR_REASON_CHARS
    assert "operatorReason" not in blank.data
    assert b"s3cr3t" not in log_path.read_bytes()


# -- validation -------------------------------------------------------------------


def test_unknown_and_reserved_events_are_refused(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        with pytest.raises(UnknownEventError) as unknown:
            log.append("tool.exploded", {})
        with pytest.raises(ReservedEventError):
            log.append("log.created", {"logId": "log_" + "a" * 22, "schema": LOG_SCHEMA})
        with pytest.raises(ReservedEventError):
            log.append("log.recovered", {"quarantinedTo": "x", "bytes": 1, "reason": "torn-line"})
    assert unknown.value.event == "tool.exploded"
    assert len(_lines(log_path)) == 1


@pytest.mark.parametrize(
    ("event", "data", "field"),
    [
        ("tool.executed", {k: v for k, v in executed("c").items() if k != "isError"}, "isError"),
        ("tool.executed", {**executed("c"), "isError": "no"}, "isError"),
        ("tool.executed", {**executed("c"), "payloadHash": "md5:1"}, "payloadHash"),
        ("tool.executed", {**executed("c"), "input": {"command": "SENSITIVE"}}, "input"),
        ("confirmation.declined", {"reason": "maybe"}, "reason"),
        ("evidence.rejected", {"decision": "fine", "reasons": [], "toolName": "b"}, "decision"),
        ("key.rotated", {"oldKeyId": "ed25519:" + "0" * 64}, "newKeyId"),
        ("planner.reported", {"planner": "p", "decision": "d", "reasons": "x"}, "reasons"),
    ],
)
def test_invalid_event_data_is_refused(
    log_path: Path, signer: FixedSigner, event: str, data: dict[str, Any], field: str
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log, pytest.raises(EventDataError) as err:
        log.append(event, data)
    assert any(e.startswith(field) for e in err.value.errors)
    assert "SENSITIVE" not in str(err.value)  # offending values are not echoed
    assert len(_lines(log_path)) == 1


def test_oversized_record_is_refused(
    log_path: Path, signer: FixedSigner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The models' own limits keep real records far below MAX_LINE_BYTES; lower it to test.
    data = {"planner": "p", "decision": "d", "reasons": ["r" * 500] * 8}
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("planner.reported", data)
        monkeypatch.setattr("audit._writing.log.MAX_LINE_BYTES", 4000)
        with pytest.raises(RecordTooLargeError) as err:
            log.append("planner.reported", data)
    assert err.value.limit == 4000
    assert len(_lines(log_path)) == 2


def test_bad_signer_writes_nothing(log_path: Path, signer: FixedSigner) -> None:
    class ShortSig:
        key_id = signer.key_id
        public_key = signer.public_key

        def sign(self, message: bytes) -> bytes:
            return b"x" * 10

    class BadKeyId:
        key_id = "rsa:123"
        public_key = signer.public_key

        def sign(self, message: bytes) -> bytes:
            return b"x" * 64

    _fill(log_path, signer, 1)
    before = log_path.read_bytes()
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.use_signer(ShortSig())
        with pytest.raises(SignerError, match="signature"):
            log.append("tool.executed", executed("c"))
        log.use_signer(BadKeyId())
        with pytest.raises(SignerError, match="key id"):
            log.append("tool.executed", executed("c"))

        class OtherPublic:
            key_id = signer.key_id
            public_key = FixedSigner(b"\x05" * 32).public_key
            sign = signer.sign

        log.use_signer(OtherPublic())
        with pytest.raises(SignerError, match="not the signer's public key"):
            log.append("tool.executed", executed("c"))

        class NoPublic:
            key_id = signer.key_id
            sign = signer.sign

        log.use_signer(NoPublic())  # type: ignore[arg-type]
        with pytest.raises(SignerError, match="public key"):
            log.append("tool.executed", executed("c"))
    assert log_path.read_bytes() == before


def test_closed_log_refuses_appends(log_path: Path, signer: FixedSigner) -> None:
    log = AuditLog.open(log_path, signer, signer.keys)
    log.close()
    log.close()
    assert log.closed
    with pytest.raises(LogClosedError):
        log.append("tool.executed", executed("c"))


def test_key_rotation_signs_new_heads_with_new_key(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("key.rotated", {"oldKeyId": signer.key_id, "newKeyId": other_signer.key_id})
        log.use_signer(other_signer)
        log.append("tool.executed", executed("c"))
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"
    result = verify_log(log_path, keyring(signer))
    assert (result.decision, result.fault) == ("tampered", "head-unknown-key")


# -- read_records -------------------------------------------------------------------


def test_read_records_round_trips(log_path: Path, signer: FixedSigner) -> None:
    written = _fill(log_path, signer, 5)
    read = list(read_records(log_path))
    assert read[1:] == written
    assert [r.to_line() for r in read] == log_path.read_bytes().splitlines(keepends=True)


def test_read_records_raises_on_a_broken_chain(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 4)
    lines = log_path.read_bytes().splitlines(keepends=True)
    del lines[2]
    log_path.write_bytes(b"".join(lines))
    reader = read_records(log_path)
    assert next(reader).seq == 0
    assert next(reader).seq == 1
    with pytest.raises(LogFormatError) as err:
        next(reader)
    assert (err.value.line, err.value.kind) == (3, "seq-mismatch")


def test_read_records_missing_log(tmp_path: Path) -> None:
    with pytest.raises(LogNotFoundError):
        list(read_records(tmp_path / "nope.jsonl"))


# -- crash recovery -------------------------------------------------------------------


def _torn_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".torn-*"))


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b'{"data":{"keyId":"ed25519:00', "torn-line"),
        (b"\x00" * 37, "torn-line"),
    ],
)
def test_torn_tail_is_quarantined_on_open(
    log_path: Path,
    signer: FixedSigner,
    keys: dict[str, Ed25519PublicKey],
    tail: bytes,
    reason: str,
) -> None:
    written = _fill(log_path, signer, 3)
    good = log_path.read_bytes()
    with log_path.open("ab") as handle:
        handle.write(tail)
    assert verify_log(log_path, keys).decision == "tampered"

    with (
        freeze_time("2026-11-22T05:06:07.089Z"),
        AuditLog.open(log_path, signer, signer.keys) as log,
    ):
        after = log.append("tool.executed", executed("next"))

    (torn,) = _torn_files(log_path)
    assert torn.name == "audit.jsonl.torn-20261122T050607.089Z"
    assert torn.read_bytes() == tail
    assert stat.S_IMODE(torn.stat().st_mode) == 0o600
    records = list(read_records(log_path))
    assert log_path.read_bytes().startswith(good)
    recovered = records[4]
    assert recovered.event == "log.recovered"
    assert recovered.data == {"quarantinedTo": torn.name, "bytes": len(tail), "reason": reason}
    assert recovered.prev == written[-1].hash
    assert records[5] == after
    assert verify_log(log_path, keys).decision == "intact"


@pytest.mark.parametrize(
    ("tail", "kind"),
    [
        (b'{"seq": 99}\n', "malformed-line"),
        (b'{"seq": 99}\n{"data":', "malformed-line"),
        (b"\n", "malformed-line"),
    ],
)
def test_a_complete_bad_line_after_the_head_is_refused_not_quarantined(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey], tail: bytes, kind: str
) -> None:
    # Only bytes after the last line feed can be a crash's torn line; a complete line
    # that is not a record is damage, and recovery is the operator's call.
    _fill(log_path, signer, 3)
    with log_path.open("ab") as handle:
        handle.write(tail)
    damaged = log_path.read_bytes()
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert err.value.kind == kind
    assert log_path.read_bytes() == damaged
    assert _torn_files(log_path) == []
    assert verify_log(log_path, keys).decision == "tampered"


def test_unsigned_complete_record_is_quarantined(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    # A crash after the line's fsync but before the head was replaced: the append never
    # returned, so the record is moved aside, not kept (the head is the commit point).
    _fill(log_path, signer, 2)
    head = log_path.with_name("audit.jsonl.head")
    old_head = head.read_bytes()
    before = log_path.read_bytes()
    _fill(log_path, signer, 1)
    unacknowledged = log_path.read_bytes()[len(before) :]
    head.write_bytes(old_head)
    assert verify_log(log_path, keys).fault == "records-after-head"

    AuditLog.open(log_path, signer, signer.keys).close()
    (torn,) = _torn_files(log_path)
    assert torn.read_bytes() == unacknowledged
    last = list(read_records(log_path))[-1]
    assert (last.seq, last.event, last.data["reason"]) == (3, "log.recovered", "unsigned-tail")
    assert verify_log(log_path, keys).decision == "intact"


def test_crash_while_creating_the_log(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    log_path.parent.mkdir()
    log_path.write_bytes(b'{"data":{"logId":"log_')
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("c"))
    records = list(read_records(log_path))
    assert [r.event for r in records] == ["log.created", "log.recovered", "tool.executed"]
    assert records[1].data["reason"] == "torn-line"
    assert verify_log(log_path, keys).decision == "intact"


def test_a_head_of_another_log_swapped_in_while_open_is_refused_by_its_origin(
    tmp_path: Path, log_path: Path, signer: FixedSigner
) -> None:
    # The same key signs both logs, and both have as many records: only the checkpoint's
    # origin (the log id of record 0) tells the heads apart before any record is read.
    other = tmp_path / "other" / "audit.jsonl"
    _fill(other, signer, 3)
    with AuditLog.open(log_path, signer, signer.keys) as log:
        for i in range(3):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
        head = log_path.with_name("audit.jsonl.head")
        head.write_bytes(other.with_name("audit.jsonl.head").read_bytes())
        before = log_path.read_bytes()
        with pytest.raises(LogIntegrityError) as err:
            log.append("tool.executed", executed("call-3", "cmd 3"))
    assert err.value.kind == "head-origin-mismatch"
    assert log_path.read_bytes() == before


def test_crash_before_the_first_head(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()
    first = log_path.read_bytes()
    log_path.with_name("audit.jsonl.head").unlink()
    AuditLog.open(log_path, signer, signer.keys).close()
    (torn,) = _torn_files(log_path)
    assert torn.read_bytes() == first
    assert verify_log(log_path, keys).decision == "intact"


@pytest.mark.parametrize(
    ("damage", "kind"),
    [
        ("truncate-last", "records-missing-at-end"),
        ("empty", "records-missing-at-end"),
        ("delete-head", "head-missing"),
        ("garble-head", "head-malformed"),
        ("flip-last", "head-mismatch"),
        ("other-log", "head-origin-mismatch"),
    ],
)
def test_appender_refuses_to_sign_over_damage(
    tmp_path: Path, log_path: Path, signer: FixedSigner, damage: str, kind: str
) -> None:
    _fill(log_path, signer, 3)
    head = log_path.with_name("audit.jsonl.head")
    lines = log_path.read_bytes().splitlines(keepends=True)
    if damage == "truncate-last":
        log_path.write_bytes(b"".join(lines[:-1]))
    elif damage == "empty":
        log_path.write_bytes(b"")
    elif damage == "delete-head":
        head.unlink()
    elif damage == "garble-head":
        head.write_bytes(b"{not json")
    elif damage == "flip-last":
        log_path.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b"call-2", b"call-9"))
    else:
        other = tmp_path / "other" / "audit.jsonl"
        _fill(other, signer, 3)
        head.write_bytes(other.with_name("audit.jsonl.head").read_bytes())
    damaged = log_path.read_bytes()
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert err.value.kind == kind
    assert log_path.read_bytes() == damaged
    assert _torn_files(log_path) == []


def test_append_notices_another_process_crashed(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("a"))
        with log_path.open("ab") as handle:  # "another process" died mid-line
            handle.write(b'{"data":')
        rec = log.append("tool.executed", executed("b"))
    records = list(read_records(log_path))
    assert [r.event for r in records[-2:]] == ["log.recovered", "tool.executed"]
    assert records[-1] == rec
    assert verify_log(log_path, keys).decision == "intact"


def test_replaced_log_file_is_detected(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        os.replace(log_path, log_path.with_name("moved.jsonl"))
        log_path.write_bytes(b"")
        with pytest.raises(LogIntegrityError) as err:
            log.append("tool.executed", executed("c"))
    assert err.value.kind == "log-replaced"
