"""Faults while a record or the head is written, injected where a local disk never fails.

A failed ``fsync`` or ``rename`` (a full or failing disk, a network file system) must end in
the guard's own error naming the file, with no partial line left and no temporary head file
left over, even when the clean-up itself fails. The head's temporary file is created with
``O_EXCL`` under a random name: a file or a symlink planted at that name is never written
through.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import audit._writing.files
from audit._errors import LogWriteError
from audit.log import AuditLog
from tests.audit.audit_testkit import FixedSigner, executed

SIGNER = FixedSigner(b"\x41" * 32)


@pytest.fixture
def log(tmp_path: Path) -> Iterator[AuditLog]:
    opened = AuditLog.open(tmp_path / "audit.jsonl", SIGNER, SIGNER.keys)
    opened.append("tool.executed", executed("call-0", "cmd 0"))
    yield opened
    opened.close()


def _failing(*_: object) -> None:
    raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_a_record_whose_sync_fails_is_cut_off_even_if_the_clean_up_sync_fails(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = log.path.read_bytes()
    monkeypatch.setattr(audit._writing.files.os, "fsync", _failing)  # the line's and the clean-up's
    with pytest.raises(LogWriteError) as err:
        log.append("tool.executed", executed("call-1", "cmd 1"))
    assert (err.value.path, err.value.problem) == (
        str(log.path),
        f"cannot write a record: {os.strerror(errno.EIO)}",
    )
    assert log.path.read_bytes() == before  # no partial line for the next one to glue onto


def test_a_head_that_cannot_be_renamed_is_an_error_even_if_its_temporary_file_is_gone(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace
    head = log.path.with_name("audit.jsonl.head")
    before = head.read_bytes()

    def lost(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if Path(target) != head:
            real_replace(source, target)
            return
        os.unlink(source)  # the clean-up's unlink then fails too
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(audit._writing.files.os, "replace", lost)
    with pytest.raises(LogWriteError) as err:
        log.append("tool.executed", executed("call-1", "cmd 1"))
    assert (err.value.path, err.value.problem) == (
        str(head),
        f"cannot replace the head: {os.strerror(errno.EXDEV)}",
    )
    assert head.read_bytes() == before
    assert [p.name for p in head.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_the_head_is_never_written_through_a_file_planted_at_its_temporary_name(
    log: AuditLog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"untouched")
    # The name is random (pid and 8 hex digits): make it known, as an attacker would wish.
    monkeypatch.setattr(audit._writing.files.secrets, "token_hex", lambda n: "ab" * n)
    planted = log.path.with_name(f".audit.jsonl.head.{os.getpid()}.abababab.tmp")
    planted.symlink_to(victim)
    with pytest.raises(LogWriteError) as err:
        log.append("tool.executed", executed("call-1", "cmd 1"))
    assert (err.value.path, err.value.problem) == (
        str(log.path.with_name("audit.jsonl.head")),
        f"cannot replace the head: {os.strerror(errno.EEXIST)}",
    )
    assert victim.read_bytes() == b"untouched"
    assert planted.is_symlink()
