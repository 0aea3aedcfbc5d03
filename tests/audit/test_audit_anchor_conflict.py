"""An anchor directory keeps the first checkpoint of each size: a second, different one of
the same size (a fork of the log) is refused with ``anchor-conflict`` and writes nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from audit import NoteError
from audit.log import AuditLog
from audit.tlog import AnchorDir, open_checkpoint, sign_checkpoint
from tests.audit.audit_testkit import FixedSigner, executed


def test_a_second_checkpoint_of_the_same_size_is_a_fork(
    log_path: Path, signer: FixedSigner, tmp_path: Path
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("call-1", "rm -rf build"))
    note = log_path.with_name(log_path.name + ".head").read_bytes()
    checkpoint = open_checkpoint(note, signer.keys).checkpoint
    fork = dataclasses.replace(checkpoint, root=bytes(32))
    forked = sign_checkpoint(fork, signer.public_key, signer.sign)
    assert open_checkpoint(forked, signer.keys).checkpoint == fork  # signed, and valid alone

    anchors = AnchorDir(tmp_path / "anchors")
    path, created = anchors.add(note, checkpoint, None)
    assert created
    assert anchors.add(note, checkpoint, None) == (path, False)  # the same one again: fine
    before = sorted(p.name for p in path.parent.iterdir())

    with pytest.raises(NoteError) as refused:
        anchors.add(forked, fork, None)
    assert refused.value.code == "anchor-conflict"
    assert path.read_bytes() == note
    assert sorted(p.name for p in path.parent.iterdir()) == before
    latest, problems = anchors.latest(signer.keys, checkpoint.origin)
    assert latest is not None and latest.note == note and problems == []
