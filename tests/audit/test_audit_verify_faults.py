"""What ``verify_log`` says about a log that does not match its head or an earlier checkpoint,
and the progress line it prints on a terminal.

An auditor reads ``fault`` and ``detail``: each fault here is produced for real (a rolled-back
log, a rewritten one, another log's checkpoint, a head behind or beyond the records) and its
words are pinned.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from freezegun import freeze_time

from audit.log import AuditLog
from audit.tlog._tree import tree_path_for
from audit.verify import tty_progress, verify_log
from tests.audit.audit_testkit import FixedSigner, checkpoint_head, executed

SIGNER = FixedSigner(b"\x22" * 32)
KEYS: dict[str, Ed25519PublicKey] = SIGNER.keys


def fill(path: Path, count: int, label: str = "cmd") -> None:
    with AuditLog.open(path, SIGNER, KEYS) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"{label} {i}"))


def head_of(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def cut_to(path: Path, records: int) -> None:
    """Keep the first ``records`` lines, with a head signed for exactly them."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:records]))
    head_of(path).write_bytes(checkpoint_head(path, SIGNER))
    tree_path_for(path).unlink(missing_ok=True)


@pytest.fixture
def anchored(tmp_path: Path) -> tuple[Path, bytes]:
    """A log of 11 records (genesis + 10) and the checkpoint signed over it."""
    path = tmp_path / "audit.jsonl"
    fill(path, 10)
    return path, head_of(path).read_bytes()


def test_a_log_rolled_back_with_its_head_is_rolled_back(anchored: tuple[Path, bytes]) -> None:
    path, note = anchored
    cut_to(path, 6)
    assert verify_log(path, KEYS).decision == "intact"  # consistent with its own head
    result = verify_log(path, KEYS, against=note)
    assert (result.decision, result.fault, result.exit_code) == ("tampered", "rolled-back", 4)
    assert result.detail == (
        "the log has 6 records but a signed checkpoint of it had 11: "
        "it was rolled back or truncated"
    )


def test_a_log_rewritten_past_the_checkpoint_is_a_fork(anchored: tuple[Path, bytes]) -> None:
    path, note = anchored
    cut_to(path, 3)
    fill(path, 12, label="other")  # as long as before and longer, but another history
    assert verify_log(path, KEYS).decision == "intact"
    result = verify_log(path, KEYS, against=note)
    assert (result.decision, result.fault) == ("tampered", "checkpoint-fork")
    assert result.detail == (
        "the first 11 records no longer hash to the root of the earlier checkpoint: "
        "the log was rewritten (a fork)"
    )


def test_another_logs_checkpoint_is_no_evidence_about_this_one(
    tmp_path: Path, anchored: tuple[Path, bytes]
) -> None:
    _, note = anchored
    other = tmp_path / "other" / "audit.jsonl"
    other.parent.mkdir()
    fill(other, 12)
    result = verify_log(other, KEYS, against=note)
    assert (result.decision, result.fault) == ("tampered", "checkpoint-untrusted")
    assert result.detail == "the earlier checkpoint is of another log"


def test_a_head_beyond_the_records_says_where_the_log_ends(anchored: tuple[Path, bytes]) -> None:
    path, _ = anchored
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:7]))
    result = verify_log(path, KEYS)
    assert (result.fault, result.line) == ("records-missing-at-end", 8)
    assert result.detail == (
        "the head names record 10 but it ends at record 6: lines were cut from the end"
    )
    path.write_bytes(b"")
    result = verify_log(path, KEYS)
    assert result.fault == "records-missing-at-end"
    assert result.detail == (
        "the head names record 10 but the log is empty: lines were cut from the end"
    )


def test_records_after_the_head_are_named_by_their_range(anchored: tuple[Path, bytes]) -> None:
    path, _ = anchored
    note = head_of(path).read_bytes()
    fill(path, 3)
    head_of(path).write_bytes(note)  # the head put back to record 10
    tree_path_for(path).unlink(missing_ok=True)
    result = verify_log(path, KEYS)
    assert (result.fault, result.line) == ("records-after-head", 12)
    assert result.detail == "records 11..13 are not covered by the signed head"


# -- the progress line -------------------------------------------------------------------------


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


MIB = 1024 * 1024


def test_progress_goes_to_stderr_under_its_default_label(monkeypatch: pytest.MonkeyPatch) -> None:
    err = FakeTty()
    monkeypatch.setattr(sys, "stderr", err)
    show = tty_progress()
    assert show is not None
    show(100 * MIB, 100 * MIB)
    assert err.getvalue() == "\rverifying audit log: 100% (100.0/100.0 MiB)\n"


def test_progress_of_an_empty_log_is_complete() -> None:
    out = FakeTty()
    show = tty_progress(out, label="v")
    assert show is not None
    show(0, 0)
    assert out.getvalue() == "\rv: 100% (0.0/0.0 MiB)\n"


def test_progress_is_shown_at_most_every_fifth_of_a_second() -> None:
    out = FakeTty()
    with freeze_time("2026-11-23 10:00:00") as clock:
        show = tty_progress(out, label="v")
        assert show is not None
        show(10 * MIB, 400 * MIB)
        clock.tick(0.19)
        show(20 * MIB, 400 * MIB)  # too soon: not shown
        clock.tick(0.01)
        show(30 * MIB, 400 * MIB)  # 0.2 s after the last one shown
        clock.tick(0.5)
        show(399 * MIB, 400 * MIB)
    assert out.getvalue() == (
        "\rv:   2% (10.0/400.0 MiB)\rv:   7% (30.0/400.0 MiB)\rv:  99% (399.0/400.0 MiB)"
    )


def test_a_missing_head_says_the_log_is_unanchored(anchored: tuple[Path, bytes]) -> None:
    path, _ = anchored
    head_of(path).unlink()
    result = verify_log(path, KEYS)
    assert result.fault == "head-missing"
    assert result.detail == "there is no signed head file: the log is unanchored"


def test_a_head_is_read_up_to_its_cap_and_refused_beyond(anchored: tuple[Path, bytes]) -> None:
    from audit._records.chain import MAX_HEAD_BYTES

    path, _ = anchored
    head_of(path).write_bytes(b"x" * MAX_HEAD_BYTES)  # at the cap: parsed (and refused as such)
    at_cap = verify_log(path, KEYS)
    assert at_cap.fault == "head-malformed"
    assert at_cap.detail != "the head file is too large"
    head_of(path).write_bytes(b"x" * (MAX_HEAD_BYTES + 1))
    beyond = verify_log(path, KEYS)
    assert (beyond.fault, beyond.detail) == ("head-malformed", "the head file is too large")
