"""What an open AuditLog keeps between appends, and what a new log starts with.

An open log remembers where its last record ends, the head it wrote and how the file
looked after it (inode, size, times), so an append to an unchanged log reads only the head
file (not the log); any change of the file or the head makes it check every line up to
the head again (from the latest anchored checkpoint, if one fits). A refusal is repeated, never forgotten. A new log gets a
fresh random id, and the Merkle cache beside it is right from its first record on.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError, LogWriteError
from audit.log import AuditLog
from audit.tlog import AnchorDir, leaf_hash, open_checkpoint
from audit.tlog._tree import read_tree_state
from audit.verify import read_records, verify_log
from tests.audit.audit_testkit import FixedSigner, executed

_PROC_IO = Path("/proc/self/io")


def _bytes_read() -> int:
    """Bytes this process has read so far (Linux ``rchar``)."""
    fields = dict(line.split(": ") for line in _PROC_IO.read_text().splitlines())
    return int(fields["rchar"])


def _head(path: Path) -> Path:
    return path.with_name(path.name + ".head")


needs_proc_io = pytest.mark.skipif(not _PROC_IO.exists(), reason="needs Linux /proc/self/io")


@needs_proc_io
def test_appends_to_an_unchanged_open_log_read_only_its_head(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        for i in range(400):  # well over one 64 KiB read of the log
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
    assert log_path.stat().st_size > 128 * 1024

    with AuditLog.open(log_path, signer, signer.keys) as log:
        for i in range(3):
            head_size = _head(log_path).stat().st_size
            before = _bytes_read()
            log.append("tool.executed", executed(f"more-{i}"))
            # The head, and the few bytes of /proc/self/io itself; never the log.
            assert _bytes_read() - before < head_size + 512
    assert verify_log(log_path, keys).decision == "intact"


@needs_proc_io
@pytest.mark.parametrize("start", ["new", "crash-while-creating"])
def test_the_first_append_to_a_log_just_created_reads_only_its_head(
    log_path: Path, signer: FixedSigner, start: str
) -> None:
    if start == "crash-while-creating":
        log_path.parent.mkdir()
        log_path.write_bytes(b'{"data":{"logId":"log_')
    with AuditLog.open(log_path, signer, signer.keys) as log:
        head_size = _head(log_path).stat().st_size
        before = _bytes_read()
        log.append("tool.executed", executed("first"))
        # Reading the log (two lines) and its Merkle cache again would add over 1 KiB.
        assert _bytes_read() - before < head_size + 512


def test_a_refusal_is_repeated_on_every_append(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        for i in range(3):
            log.append("tool.executed", executed(f"call-{i}"))
        lines = log_path.read_bytes().splitlines(keepends=True)
        log_path.write_bytes(b"".join(lines[:-1]))  # the head's record is gone
        for _ in range(3):
            with pytest.raises(LogIntegrityError) as err:
                log.append("tool.executed", executed("refused"))
            assert err.value.kind == "records-missing-at-end"
    assert log_path.read_bytes() == b"".join(lines[:-1])


def test_a_log_path_that_cannot_be_looked_up_is_an_error_naming_it(
    log_path: Path, signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log_path.unlink()
        log_path.symlink_to(log_path.name)  # a link to itself: stat fails with ELOOP
        with pytest.raises(LogWriteError) as err:
            log.append("tool.executed", executed("c"))
    assert err.value.path == str(log_path)
    assert err.value.problem == f"cannot stat: {os.strerror(errno.ELOOP)}"


def test_a_new_log_has_a_random_id_of_18_bytes(tmp_path: Path, signer: FixedSigner) -> None:
    ids = set()
    for name in ("a", "b", "c"):
        path = tmp_path / name / "audit.jsonl"
        AuditLog.open(path, signer, signer.keys).close()
        (created,) = read_records(path)
        ids.add(created.data["logId"])
    assert len(ids) == 3
    for log_id in ids:
        assert re.fullmatch(r"log_[A-Za-z0-9_-]{24}", log_id), log_id


def test_a_new_logs_merkle_cache_starts_at_its_first_record(
    log_path: Path, signer: FixedSigner
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()
    state = read_tree_state(log_path)
    assert state is not None
    assert (state.offset, state.frontier.size) == (0, 0)


def test_after_a_crash_while_creating_the_cache_holds_record_0(
    log_path: Path, signer: FixedSigner
) -> None:
    log_path.parent.mkdir()
    log_path.write_bytes(b'{"data":{"logId":"log_')
    AuditLog.open(log_path, signer, signer.keys).close()
    first, _recovered = log_path.read_bytes().splitlines(keepends=True)
    state = read_tree_state(log_path)
    assert state is not None
    assert (state.offset, state.frontier.size) == (len(first), 1)
    assert state.frontier.hashes == [leaf_hash(first[:-1])]


@needs_proc_io
def test_opening_a_large_log_reads_all_of_it_or_from_its_anchor(
    log_path: Path, signer: FixedSigner, tmp_path: Path
) -> None:
    # Nothing in the home vouches for the lines before the head's record (the Merkle cache
    # beside the log is as easy to edit as the log), so opening reads them all; an anchored
    # checkpoint kept elsewhere does, so with one only what follows it is read.
    big = {"planner": "p", "decision": "d", "reasons": ["r" * 512] * 64}  # about 33 KiB
    with AuditLog.open(log_path, signer, signer.keys) as log:
        for _ in range(40):
            log.append("planner.reported", big)
    size = log_path.stat().st_size
    assert size > 1024 * 1024
    before = _bytes_read()
    AuditLog.open(log_path, signer, signer.keys).close()
    assert _bytes_read() - before >= size

    anchors = AnchorDir(tmp_path / "anchors")
    note = _head(log_path).read_bytes()
    anchors.add(note, open_checkpoint(note, signer.keys).checkpoint, read_tree_state(log_path))
    with AuditLog.open(log_path, signer, signer.keys, anchors=anchors) as log:
        log.append("planner.reported", big)
    before = _bytes_read()
    AuditLog.open(log_path, signer, signer.keys, anchors=anchors).close()
    assert _bytes_read() - before < 512 * 1024
