"""A second, independent test for each chain check the tamper matrix also covers.

The tamper matrix (test_audit_tamper.py) reaches ``prev`` only by splicing in a line of another
log and the head-vs-last-line check only with another log's head. Here each check is met by a
forgery that passes every *other* check: a line whose own hash is right but whose ``prev`` is
not, and a head correctly signed by the trusted key that names the last ``seq`` with a wrong
hash — so only the check under test can catch it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from audit import HEAD_DOMAIN, AuditLog, canonical_json, sha256_prefixed, verify_log
from tests.audit.audit_testkit import FixedSigner, executed, keyring

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
    head = json.loads(log.with_name(log.name + ".head").read_bytes())
    head.update(changes)
    unsigned = {k: v for k, v in head.items() if k != "signature"}
    signature = SIGNER.sign(HEAD_DOMAIN + canonical_json(unsigned))
    head["signature"] = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    return canonical_json(head) + b"\n"


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


def test_a_rehashed_last_line_under_the_old_head_is_caught_by_the_head(log: Path) -> None:
    # Only the last line is rewritten (its prev is right): every line checks out, the head
    # still names the old last line: only the head-vs-last-line check sees it.
    lines = log.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[-1])
    lines[-1] = _rehashed(record, data=executed("call-x", "rm -rf /"))
    log.write_bytes(b"".join(lines))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "head-mismatch", RECORDS)


def test_a_trusted_head_naming_the_last_seq_with_another_hash_is_a_head_mismatch(
    log: Path,
) -> None:
    lines = log.read_bytes().splitlines()
    second_last = json.loads(lines[-2])["hash"]
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(_signed_head(log, hash=second_last))
    result = verify_log(log, keyring(SIGNER))
    assert (result.decision, result.fault, result.line) == ("tampered", "head-mismatch", RECORDS)
    assert result.head_seq == RECORDS - 1


def test_a_re_signed_true_head_is_intact(log: Path) -> None:
    # The forgery helper itself changes nothing the verifier objects to.
    head_path = log.with_name(log.name + ".head")
    head_path.write_bytes(_signed_head(log))
    assert verify_log(log, keyring(SIGNER)).decision == "intact"
