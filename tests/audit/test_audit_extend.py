"""Verify before extending: the appender never signs a head over a log it cannot vouch for.

A same-user process can rewrite the log without the key (drop or insert records and
re-chain them) and write any head it likes. Before, the next append signed a fresh head
over the forgery and ``verify`` turned from tampered to intact; now the appender refuses
(:class:`audit.LogIntegrityError`) and ``verify`` keeps saying tampered.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError, UsageError
from audit.log import AuditLog, recover_log
from audit.verify import build_report, read_records, verify_log
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, checkpoint_head, consumed, executed, recorded

HEAD = "audit.jsonl.head"


def _fill(path: Path, signer: FixedSigner, count: int) -> list[bytes]:
    """``count`` appends after genesis; returns the head bytes after each record."""
    heads = []
    with AuditLog.open(path, signer, signer.keys) as log:
        heads.append(log.head_path.read_bytes())
        for i in range(count):
            eid = f"oce_{i:022d}"
            log.append("confirmation.recorded", recorded(eid, f"call-{i}", f"cmd {i}"))
            heads.append(log.head_path.read_bytes())
    return heads


def _line(body: dict[str, Any]) -> bytes:
    body = {k: v for k, v in body.items() if k != "hash"}
    return canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"


def _rechain(records: list[dict[str, Any]]) -> bytes:
    """The records renumbered and re-chained from record 0 on, as a forger without the key can."""
    out: list[bytes] = []
    prev = records[0]["prev"]
    for seq, rec in enumerate(records):
        line = _line({**rec, "seq": seq, "prev": prev})
        prev = json.loads(line)["hash"]
        out.append(line)
    return b"".join(out)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _refused(path: Path, signer: FixedSigner, kind: str) -> None:
    before = path.read_bytes()
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(path, signer, signer.keys)
    assert err.value.kind == kind, err.value
    assert path.read_bytes() == before, "a refusing appender leaves the log alone"
    assert not list(path.parent.glob("audit.jsonl.torn-*"))


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"garbage", "head-malformed"),
        (None, "head-signature-invalid"),  # the real head, re-pointed; signature kept
        ("mallory", "head-unknown-key"),
    ],
)
def test_drop_a_record_rechain_and_forge_the_head(
    log_path: Path,
    signer: FixedSigner,
    keys: dict[str, Ed25519PublicKey],
    head: bytes | str | None,
    kind: str,
) -> None:
    _fill(log_path, signer, 5)
    records = _records(log_path)
    del records[2]
    log_path.write_bytes(_rechain(records))
    last = json.loads(log_path.read_bytes().splitlines()[-1])
    head_path = log_path.with_name(HEAD)
    assert last["seq"] == 4
    if head is None:
        # the new size and root under the old signature
        old_signature = head_path.read_bytes().partition(b"\n\n")[2]
        text = checkpoint_head(log_path, signer).partition(b"\n\n")[0]
        head_path.write_bytes(text + b"\n\n" + old_signature)
    elif head == "mallory":
        mallory = FixedSigner(b"\x42" * 32)
        head_path.write_bytes(checkpoint_head(log_path, mallory))
    else:
        assert isinstance(head, bytes)
        head_path.write_bytes(head)
    assert verify_log(log_path, keys).decision == "tampered"
    _refused(log_path, signer, kind)
    assert verify_log(log_path, keys).decision == "tampered"


def test_a_fake_confirmation_inserted_and_rechained_is_refused(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    _fill(log_path, signer, 3)
    records = _records(log_path)
    fake = {**records[1], "data": recorded("oce_" + "f" * 22, "call-x", "git push --force")}
    records.insert(2, fake)
    log_path.write_bytes(_rechain(records))
    # re-chaining changed the hash of the record the old head names: the tree's root differs
    _refused(log_path, signer, "root-mismatch")
    log_path.with_name(HEAD).write_bytes(b"{}")
    _refused(log_path, signer, "head-malformed")
    assert verify_log(log_path, keys).decision == "tampered"


def test_two_chained_records_added_without_the_key_are_refused(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    _fill(log_path, signer, 2)
    records = _records(log_path)
    extra = [
        {**records[-1], "event": "confirmation.recorded", "data": recorded("oce_" + "a" * 22, "x")},
        {**records[-1], "event": "evidence.consumed", "data": consumed("oce_" + "a" * 22)},
    ]
    log_path.write_bytes(_rechain(records + extra))
    log_path.with_name(HEAD).write_bytes(log_path.with_name(HEAD).read_bytes())
    _refused(log_path, signer, "records-after-head")
    assert verify_log(log_path, keys).fault == "records-after-head"


def test_one_fake_record_after_the_head_is_moved_aside_and_recorded(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    # One complete record that chains from the head's record is exactly what a crash
    # between the line's fsync and the head's replacement leaves: it cannot be told
    # apart, so it is set aside (never kept) and the log says so.
    _fill(log_path, signer, 2)
    records = _records(log_path)
    fake = {**records[-1], "data": recorded("oce_" + "b" * 22, "call-fake", "rm -rf /")}
    forged = _rechain([*records, fake])
    extra = forged[len(log_path.read_bytes()) :]
    log_path.write_bytes(forged)
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("call-fake", "rm -rf /"))
    (torn,) = log_path.parent.glob("audit.jsonl.torn-*")
    assert torn.read_bytes() == extra
    kept = list(read_records(log_path))
    assert [r.event for r in kept[-2:]] == ["log.recovered", "tool.executed"]
    assert kept[-2].data["reason"] == "unsigned-tail"
    assert all(r.data.get("evidenceId") != "oce_" + "b" * 22 for r in kept)
    assert build_report(kept).decision != "no-gaps", "the fake confirmation does not count"
    assert verify_log(log_path, keys).decision == "intact"


def test_an_older_valid_head_put_back_is_refused_not_quarantined(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    heads = _fill(log_path, signer, 5)
    log_path.with_name(HEAD).write_bytes(heads[2])
    assert verify_log(log_path, keys).fault == "records-after-head"
    _refused(log_path, signer, "records-after-head")
    result = verify_log(log_path, keys)
    assert (result.decision, result.fault, result.line) == ("tampered", "records-after-head", 4)


def test_a_head_one_record_behind_looks_like_a_crash_and_is_recorded(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    heads = _fill(log_path, signer, 3)
    last = log_path.read_bytes().splitlines(keepends=True)[-1]
    log_path.with_name(HEAD).write_bytes(heads[-2])
    AuditLog.open(log_path, signer, signer.keys).close()
    (torn,) = log_path.parent.glob("audit.jsonl.torn-*")
    assert torn.read_bytes() == last
    assert list(read_records(log_path))[-1].event == "log.recovered"
    assert verify_log(log_path, keys).decision == "intact"


def test_a_torn_line_after_an_unsigned_record_is_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    heads = _fill(log_path, signer, 3)
    log_path.with_name(HEAD).write_bytes(heads[-2])
    with log_path.open("ab") as handle:
        handle.write(b'{"data":')
    _refused(log_path, signer, "records-after-head")


def test_a_record_after_the_head_that_does_not_chain_is_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 2)
    records = _records(log_path)
    with log_path.open("ab") as handle:
        handle.write(_line({**records[-1], "seq": records[-1]["seq"] + 1}))  # prev not re-pointed
    _refused(log_path, signer, "prev-mismatch")
    log_path.write_bytes(b"".join(_line(r) for r in records))
    with log_path.open("ab") as handle:
        handle.write(
            _line({**records[-1], "seq": records[-1]["seq"] + 2, "prev": records[-1]["hash"]})
        )
    _refused(log_path, signer, "seq-mismatch")


def test_a_headless_log_of_one_line_that_is_not_a_genesis_is_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 2)
    second = log_path.read_bytes().splitlines(keepends=True)[1]
    log_path.write_bytes(second)
    log_path.with_name(HEAD).unlink()
    _refused(log_path, signer, "head-missing")


def test_an_open_log_notices_a_forged_head(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    # The appender of a long-lived process (the sidecar) re-checks the head whenever the
    # head file is not the one it wrote, even if the log kept its size.
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("a"))
        log.head_path.write_bytes(b"garbage")
        with pytest.raises(LogIntegrityError) as err:
            log.append("tool.executed", executed("b"))
        assert err.value.kind == "head-malformed"
    assert verify_log(log_path, keys).decision == "tampered"


def test_public_keys_are_required_and_checked(log_path: Path, signer: FixedSigner) -> None:
    with pytest.raises(UsageError):
        AuditLog.open(log_path, signer, {"k": "not a key"})  # type: ignore[dict-item]
    _fill(log_path, signer, 1)
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, {})
    assert err.value.kind == "head-unknown-key"


# -- recovery is the operator's explicit act ---------------------------------------------


def test_recover_moves_the_damaged_log_aside_and_records_it(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    heads = _fill(log_path, signer, 5)
    log_path.with_name(HEAD).write_bytes(heads[2])
    damaged = log_path.read_bytes()
    old_id = _records(log_path)[0]["data"]["logId"]
    _refused(log_path, signer, "records-after-head")

    result = recover_log(log_path, signer, signer.keys, reason="older head put back")
    moved = log_path.with_name(result.moved_to)
    assert moved.read_bytes() == damaged, "the damaged log is kept, byte for byte"
    assert result.head_moved_to is not None
    assert log_path.with_name(result.head_moved_to).read_bytes() == heads[2]
    assert verify_log(moved, keys).fault == "records-after-head", "still verifiable as it was"
    assert (result.fault, result.line, result.bytes) == ("records-after-head", 4, len(damaged))
    assert result.sha256 == "sha256:" + hashlib.sha256(damaged).hexdigest()

    new = list(read_records(log_path))
    assert [r.event for r in new] == ["log.created", "log.recovered"]
    assert new[0].data["logId"] == result.log_id != old_id
    assert new[1].data == {
        "quarantinedTo": result.moved_to,
        "headMovedTo": result.head_moved_to,
        "bytes": len(damaged),
        "reason": "operator-recovery",
        "sha256": result.sha256,
        "previousLogId": old_id,
        "fault": "records-after-head",
        "line": 4,
        "operatorReason": "older head put back",
    }
    assert verify_log(log_path, keys).decision == "intact"
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("after"))
    assert verify_log(log_path, keys).decision == "intact"


def test_recover_refuses_an_intact_log_and_an_empty_reason(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 1)
    before = log_path.read_bytes()
    with pytest.raises(UsageError):
        recover_log(log_path, signer, signer.keys, reason="just because")
    log_path.with_name(HEAD).write_bytes(b"garbage")
    with pytest.raises(UsageError):
        recover_log(log_path, signer, signer.keys, reason="   ")
    assert log_path.read_bytes() == before
    assert sorted(p.name for p in log_path.parent.iterdir()) == [
        "audit.jsonl",
        HEAD,
        "audit.jsonl.tree",
    ]


def test_recover_a_headless_log(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    _fill(log_path, signer, 2)
    log_path.with_name(HEAD).unlink()
    _refused(log_path, signer, "head-missing")
    result = recover_log(log_path, signer, signer.keys, reason="head lost")
    assert (result.fault, result.head_moved_to) == ("head-missing", None)
    assert verify_log(log_path, keys).decision == "intact"
