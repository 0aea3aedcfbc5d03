"""A second, independent test for each chain check the tamper matrix also covers.

The tamper matrix (test_audit_tamper.py) reaches ``prev`` only by splicing in a line of another
log and the head-vs-last-line check only with another log's head. Here each check is met by a
forgery that passes every *other* check: a line whose own hash is right but whose ``prev`` is
not, and a head correctly signed by the trusted key that names the last ``seq`` with a wrong
hash — so only the check under test can catch it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.log import AuditLog
from audit.verify import verify_log
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, checkpoint_head, executed, keyring, legacy_head

SIGNER = FixedSigner(bytes(range(1, 33)))
RECORDS = 6  # log.created + 5 appended


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, SIGNER, keyring(SIGNER)) as opened:
        for i in range(RECORDS - 1):
            opened.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
    assert len(path.read_bytes().splitlines()) == RECORDS
    return path


def _rehashed(record: dict[str, Any], **changes: Any) -> bytes:
    body = {k: v for k, v in record.items() if k != "hash"}
    body.update(changes)
    return canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"


def _signed_head(log: Path, **changes: Any) -> bytes:
    """A head of the format before checkpoints (they must keep verifying)."""
    return legacy_head(log, SIGNER, **changes)


def test_the_fixture_log_is_intact(log: Path) -> None:
    assert verify_log(log, keyring(SIGNER)).decision == "intact"


@pytest.mark.parametrize("index", range(1, RECORDS))
def test_a_rehashed_line_with_a_wrong_prev_is_a_prev_mismatch(log: Path, index: int) -> None:
    lines = log.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[index])
    lines[index] = _rehashed(record, prev=sha256_prefixed(b"not the previous line"))
    log.write_bytes(b"".join(lines))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "prev-mismatch", index + 1)


def test_a_rehashed_last_line_under_the_old_head_is_caught_by_the_root(log: Path) -> None:
    # Only the last line is rewritten (its prev is right): every line checks out, the
    # checkpoint head's root no longer matches: only the root check sees it.
    lines = log.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[-1])
    lines[-1] = _rehashed(record, data=executed("call-x", "rm -rf /"))
    log.write_bytes(b"".join(lines))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "root-mismatch", None)


def test_a_rehashed_last_line_under_an_old_format_head_is_caught_by_the_head(
    log: Path,
) -> None:
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(_signed_head(log))
    assert verify_log(log, keyring(SIGNER)).decision == "intact"
    lines = log.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[-1])
    lines[-1] = _rehashed(record, data=executed("call-x", "rm -rf /"))
    log.write_bytes(b"".join(lines))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "head-mismatch", RECORDS)


def test_a_checkpoint_naming_the_right_size_with_another_root_is_a_root_mismatch(
    log: Path,
) -> None:
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(checkpoint_head(log, SIGNER, root=b"\x07" * 32))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "root-mismatch", None)
    assert result.detail == (
        "the records hash to another Merkle root than the signed checkpoint names"
    )
    head_path.write_bytes(checkpoint_head(log, SIGNER))
    assert verify_log(log, keyring(SIGNER)).decision == "intact"


def test_a_trusted_head_naming_the_last_seq_with_another_hash_is_a_head_mismatch(
    log: Path,
) -> None:
    lines = log.read_bytes().splitlines()
    second_last = json.loads(lines[-2])["hash"]
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(_signed_head(log, hash=second_last))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "head-mismatch", RECORDS)
    assert result.detail == "the head's hash differs from the last line"
    assert result.head_seq == RECORDS - 1


def test_a_re_signed_true_head_is_intact(log: Path) -> None:
    # The forgery helper itself changes nothing the verifier objects to.
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(_signed_head(log))
    assert verify_log(log, keyring(SIGNER)).decision == "intact"
