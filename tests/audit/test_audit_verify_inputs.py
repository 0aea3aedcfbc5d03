"""What ``verify_log`` does with each of its optional inputs: an earlier checkpoint it cannot
trust, a resume state without a checkpoint, a progress callback and worker processes.

An auditor who passes ``against`` asked for the log to be checked against that checkpoint: if
the checkpoint cannot be trusted, the answer is ``tampered``, never a silent ``intact``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import audit._scan
from audit import AuditLog, verify_log
from audit._scan import scan_log
from audit._tree import read_tree_state
from tests.audit.audit_testkit import FixedSigner, executed

SIGNER = FixedSigner(b"\x25" * 32)
STRANGER = FixedSigner(b"\x26" * 32)
KEYS: dict[str, Ed25519PublicKey] = SIGNER.keys


def fill(path: Path, count: int, signer: FixedSigner = SIGNER) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))


def head_of(path: Path) -> Path:
    return path.with_name(path.name + ".head")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    fill(path, 10)
    return path


def _forged_root(note: bytes) -> bytes:
    text, _, signatures = note.partition(b"\n\n")
    origin, size, root = text.split(b"\n")
    other = root[:-2] + (b"A=" if root[-2:] != b"A=" else b"B=")
    return b"\n".join([origin, size, other]) + b"\n\n" + signatures


def _untrusted_notes(log: Path, tmp_path: Path) -> dict[str, bytes]:
    note = head_of(log).read_bytes()
    stranger = tmp_path / "stranger" / "audit.jsonl"
    fill(stranger, 10, STRANGER)
    return {
        "signed by an unknown key": head_of(stranger).read_bytes(),
        "root changed after signing": _forged_root(note),
        "not a note": b"garbage",
        "cut short": note[:-10],
        "no blank line": note.replace(b"\n\n", b"\n"),
        "empty": b"",
    }


@pytest.mark.parametrize(
    "case",
    [
        "signed by an unknown key",
        "root changed after signing",
        "not a note",
        "cut short",
        "no blank line",
        "empty",
    ],
)
def test_a_checkpoint_that_cannot_be_trusted_makes_the_log_tampered(
    log: Path, tmp_path: Path, case: str
) -> None:
    assert verify_log(log, KEYS).decision == "intact"  # the log itself is fine
    against = _untrusted_notes(log, tmp_path)[case]
    result = verify_log(log, KEYS, against=against)
    assert (result.decision, result.fault, result.exit_code) == (
        "tampered",
        "checkpoint-untrusted",
        4,
    )
    assert result.detail.startswith("the earlier checkpoint: ")
    assert result.line is None


def test_the_untrusted_checkpoint_says_why(log: Path, tmp_path: Path) -> None:
    notes = _untrusted_notes(log, tmp_path)
    unknown = verify_log(log, KEYS, against=notes["signed by an unknown key"])
    assert unknown.detail == (
        "the earlier checkpoint: no-trusted-signature: no signature by the log's key verifies"
    )
    malformed = verify_log(log, KEYS, against=notes["not a note"])
    assert malformed.detail == (
        "the earlier checkpoint: note-malformed: no blank line between the text and its signatures"
    )


def test_a_resume_state_without_a_checkpoint_is_not_used(log: Path) -> None:
    state = read_tree_state(log)
    assert state is not None
    fill(log, 3)
    result = verify_log(log, KEYS, resume=state)
    assert (result.decision, result.first_line, result.records) == ("intact", 1, 14)
    assert result.root == verify_log(log, KEYS).root


def test_progress_is_reported_while_the_records_are_read(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit._scan, "_PROGRESS_EVERY", 4)  # every 4 records, not 8192
    size = log.stat().st_size
    calls: list[tuple[int, int]] = []
    result = verify_log(log, KEYS, progress=lambda done, total: calls.append((done, total)))
    assert result.decision == "intact"
    lines = log.read_bytes().splitlines(keepends=True)
    after = [sum(len(line) for line in lines[:n]) for n in (4, 8)]
    assert calls == [(after[0], size), (after[1], size), (size, size)]


def test_workers_check_a_large_log_in_processes_given_its_path(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scan_log.__kwdefaults__ is not None
    # "large" is 64 MiB by default; any log is large here, so the workers really run
    monkeypatch.setitem(scan_log.__kwdefaults__, "parallel_min_bytes", 0)
    real = audit._scan._scan_parallel
    seen: list[tuple[Any, ...]] = []

    def spy(path: str, *args: Any) -> Any:
        seen.append((path, args[-1]))
        return real(path, *args)

    monkeypatch.setattr(audit._scan, "_scan_parallel", spy)
    one = verify_log(log, KEYS)
    assert seen == []  # one worker: one process
    two = verify_log(log, KEYS, workers=2)
    assert seen == [(str(log), 2)]
    assert two.decision == one.decision == "intact"
    assert (two.records, two.root, two.last_hash) == (one.records, one.root, one.last_hash)
