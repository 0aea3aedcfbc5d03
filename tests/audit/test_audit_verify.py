"""``verify_log`` beyond the tamper matrix: results, progress and edge cases."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogNotFoundError
from audit.log import AuditLog
from audit.verify import FAULT_KINDS, VerifyResult, tty_progress, verify_log
from tests.audit.audit_testkit import FixedSigner, executed


def test_result_wire_shape(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        last = log.append("tool.executed", executed("c"))
    result = verify_log(log_path, keys)
    wire = json.loads(result.model_dump_json())
    assert wire["decision"] == "intact"
    assert wire["lastSeq"] == 1
    assert wire["lastHash"] == last.hash
    assert wire["headKeyId"] == signer.key_id
    assert wire["records"] == 2
    assert wire["bytes"] == log_path.stat().st_size
    assert wire["logId"].startswith("log_")
    assert VerifyResult.model_validate_json(result.model_dump_json()) == result
    assert set(FAULT_KINDS) >= {"hash-mismatch", "head-missing", "records-after-head"}


def test_missing_log_is_an_error(tmp_path: Path, keys: dict[str, Ed25519PublicKey]) -> None:
    with pytest.raises(LogNotFoundError):
        verify_log(tmp_path / "none.jsonl", keys)


def test_empty_log_without_head_is_unanchored(
    tmp_path: Path, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    result = verify_log(path, keys)
    assert (result.decision, result.records, result.exit_code) == ("unanchored", 0, 4)


def test_genesis_must_be_log_created(
    tmp_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    from audit.wire import canonical_json, sha256_prefixed

    body = {
        "seq": 0,
        "ts": "2026-11-22T01:00:00.000Z",
        "event": "tool.executed",
        "data": executed("c"),
        "prev": "sha256:" + "0" * 64,
    }
    line = canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"
    path = tmp_path / "audit.jsonl"
    path.write_bytes(line)
    result = verify_log(path, keys)
    assert (result.decision, result.fault, result.line) == ("tampered", "genesis-invalid", 1)


def test_only_the_snapshot_is_verified_while_others_append(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        for i in range(50):
            log.append("tool.executed", executed(f"c{i}"))
            assert verify_log(log_path, keys).decision == "intact"


def test_progress_callback_reaches_the_total(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("c"))
    calls: list[tuple[int, int]] = []
    verify_log(log_path, keys, progress=lambda done, total: calls.append((done, total)))
    size = log_path.stat().st_size
    assert calls[-1] == (size, size)
    assert all(0 <= done <= total == size for done, total in calls)


class _FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_tty_progress_prints_only_on_a_tty() -> None:
    assert tty_progress(io.StringIO()) is None
    out = _FakeTty()
    show = tty_progress(out, label="verifying")
    assert show is not None
    show(0, 4 * 1024 * 1024)
    show(1024 * 1024, 4 * 1024 * 1024)  # throttled: too soon after the first
    show(4 * 1024 * 1024, 4 * 1024 * 1024)
    text = out.getvalue()
    assert text.startswith("\rverifying:   0% (0.0/4.0 MiB)")
    assert text.endswith("\rverifying: 100% (4.0/4.0 MiB)\n")
    assert "25%" not in text
