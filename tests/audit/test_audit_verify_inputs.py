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

import audit._checking.scan
from audit._checking.scan import scan_log
from audit.log import AuditLog
from audit.tlog._tree import TreeState, read_tree_state
from audit.verify import verify_log
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
    monkeypatch.setattr(audit._checking.scan, "_PROGRESS_EVERY", 4)  # every 4 records, not 8192
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
    real = audit._checking.scan._scan_parallel
    seen: list[tuple[Any, ...]] = []

    def spy(path: str, *args: Any) -> Any:
        seen.append((path, args[-1]))
        return real(path, *args)

    monkeypatch.setattr(audit._checking.scan, "_scan_parallel", spy)
    one = verify_log(log, KEYS)
    assert seen == []  # one worker: one process
    two = verify_log(log, KEYS, workers=2)
    assert seen == [(str(log), 2)]
    assert two.decision == one.decision == "intact"
    assert (two.records, two.root, two.last_hash) == (one.records, one.root, one.last_hash)


def _signed_root(note: bytes) -> str:
    return note.partition(b"\n\n")[0].split(b"\n")[2].decode()


def test_an_intact_result_names_its_records_key_tree_and_root(log: Path) -> None:
    result = verify_log(log, KEYS)
    note = head_of(log).read_bytes()
    assert result.head_key_id is not None
    assert result.detail == f"11 records intact, head signed by {result.head_key_id}"
    assert (result.tree_size, result.root) == (11, _signed_root(note))


def test_a_resumed_check_reads_only_the_tail_and_names_the_checkpoints_log(log: Path) -> None:
    note = head_of(log).read_bytes()
    state = read_tree_state(log)
    assert state is not None and state.frontier.size == 10
    fill(log, 3)
    full = verify_log(log, KEYS, against=note)
    resumed = verify_log(log, KEYS, against=note, resume=state)
    assert (resumed.decision, resumed.first_line, full.first_line) == ("intact", 11, 1)
    # the log id is in the first record, which a resumed check does not read: the
    # checkpoint it resumed from names the log
    assert full.log_id is not None and full.log_id.startswith("log_")
    assert resumed.log_id == full.log_id
    assert (resumed.tree_size, resumed.root) == (14, _signed_root(head_of(log).read_bytes()))
    assert resumed.detail == (
        f"4 records intact, head signed by {resumed.head_key_id}; "
        "extends the checkpoint of 11 records"
    )


def test_the_log_id_is_never_taken_from_the_checkpoint_of_an_unresumed_check(log: Path) -> None:
    note = head_of(log).read_bytes()
    data = bytearray(log.read_bytes())
    data[data.index(b"log_") + 4] ^= 0x01  # the first record no longer hashes right
    log.write_bytes(bytes(data))
    result = verify_log(log, KEYS, against=note)
    assert (result.decision, result.line) == ("tampered", 1)
    assert result.log_id is None  # the records name no log: none is claimed for them


def _stale_state(log: Path, tmp_path: Path) -> TreeState:
    """A resume state of the right size whose frontier is another log's."""
    own = read_tree_state(log)
    other = tmp_path / "other" / "audit.jsonl"
    fill(other, 10)
    theirs = read_tree_state(other)
    assert own is not None and theirs is not None
    return TreeState(offset=own.offset, frontier=theirs.frontier)


def test_a_resume_state_that_does_not_reach_the_checkpoint_is_replaced_by_a_full_read(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = head_of(log).read_bytes()
    stale = _stale_state(log, tmp_path)
    fill(log, 3)
    monkeypatch.setattr(audit._checking.scan, "_PROGRESS_EVERY", 4)
    calls: list[tuple[int, int]] = []
    result = verify_log(
        log, KEYS, against=note, resume=stale, progress=lambda d, t: calls.append((d, t))
    )
    assert (result.decision, result.first_line, result.records) == ("intact", 1, 14)
    lines = log.read_bytes().splitlines(keepends=True)
    size = log.stat().st_size
    for n in (4, 8, 12):  # the full read reports its progress too
        assert (sum(len(line) for line in lines[:n]), size) in calls
    assert calls[-1] == (size, size)


def test_the_full_read_after_a_stale_resume_state_runs_in_the_workers_given_its_path(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = head_of(log).read_bytes()
    stale = _stale_state(log, tmp_path)
    fill(log, 3)
    assert scan_log.__kwdefaults__ is not None
    monkeypatch.setitem(scan_log.__kwdefaults__, "parallel_min_bytes", 0)
    real = audit._checking.scan._scan_parallel
    seen: list[tuple[Any, ...]] = []

    def spy(path: str, *args: Any) -> Any:
        seen.append((path, args[0], args[1], args[-1]))  # path, size, start, workers
        return real(path, *args)

    monkeypatch.setattr(audit._checking.scan, "_scan_parallel", spy)
    result = verify_log(log, KEYS, against=note, resume=stale, workers=2)
    assert (result.decision, result.first_line, result.records) == ("intact", 1, 14)
    size = log.stat().st_size
    assert seen == [(str(log), size, stale.offset, 2), (str(log), size, 0, 2)]
