"""I/O failures of the appender: each is a LogWriteError naming the file and the cause,
and none leaves a partial line or a head that does not match the log.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogWriteError
from audit.log import AuditLog
from audit.verify import read_records, verify_log
from tests.audit.audit_testkit import FixedSigner, executed

REPO = Path(__file__).resolve().parents[2]


def _fill(path: Path, signer: FixedSigner, count: int) -> None:
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))


def test_a_log_under_a_file_cannot_be_opened(tmp_path: Path, signer: FixedSigner) -> None:
    (tmp_path / "home").write_bytes(b"a file, not a directory")
    path = tmp_path / "home" / "audit.jsonl"
    with pytest.raises(LogWriteError) as err:
        AuditLog.open(path, signer, signer.keys)
    assert err.value.path == str(path)
    assert err.value.problem == f"cannot open: {os.strerror(errno.ENOTDIR)}"


def test_a_dangling_link_as_the_log_directory_is_an_open_error(
    tmp_path: Path, signer: FixedSigner
) -> None:
    (tmp_path / "home").symlink_to(tmp_path / "gone")
    path = tmp_path / "home" / "audit.jsonl"
    with pytest.raises(LogWriteError) as err:
        AuditLog.open(path, signer, signer.keys)
    assert err.value.path == str(path)
    assert err.value.problem == f"cannot open: {os.strerror(errno.ENOENT)}"
    assert not (tmp_path / "gone").exists()


def test_a_directory_named_as_the_log_cannot_be_opened(log_path: Path, signer: FixedSigner) -> None:
    log_path.mkdir(parents=True)
    with pytest.raises(LogWriteError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert err.value.path == str(log_path)
    assert err.value.problem == f"cannot open: {os.strerror(errno.EISDIR)}"


def test_a_fifo_named_as_the_log_is_not_a_regular_file(log_path: Path, signer: FixedSigner) -> None:
    log_path.parent.mkdir()
    os.mkfifo(log_path)
    with pytest.raises(LogWriteError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert (err.value.path, err.value.problem) == (str(log_path), "not a regular file")
    assert not log_path.with_name("audit.jsonl.head").exists()


def test_a_head_that_cannot_be_read_is_an_error_naming_the_head(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 1)
    head = log_path.with_name("audit.jsonl.head")
    content = log_path.read_bytes()
    head.unlink()
    head.mkdir()
    with pytest.raises(LogWriteError) as err:
        AuditLog.open(log_path, signer, signer.keys)
    assert err.value.path == str(head)
    assert err.value.problem == f"cannot read: {os.strerror(errno.EISDIR)}"
    assert log_path.read_bytes() == content


def test_a_head_that_cannot_be_replaced_leaves_an_unsigned_tail_moved_aside_next(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    _fill(log_path, signer, 2)
    head = log_path.with_name("audit.jsonl.head")
    kept_head = head.read_bytes()
    before = log_path.read_bytes()

    class HeadInTheWay:
        """Signs, but the head's place is taken by a directory before it is replaced."""

        key_id = signer.key_id
        public_key = signer.public_key

        def sign(self, message: bytes) -> bytes:
            head.unlink()
            head.mkdir()
            return signer.sign(message)

    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.use_signer(HeadInTheWay())
        with pytest.raises(LogWriteError) as err:
            log.append("tool.executed", executed("unacknowledged"))
        assert err.value.path == str(head)
        assert err.value.problem == f"cannot replace the head: {os.strerror(errno.EISDIR)}"
        assert [p.name for p in head.parent.iterdir() if p.name.endswith(".tmp")] == []

        unsigned = log_path.read_bytes()[len(before) :]
        assert b"unacknowledged" in unsigned and unsigned.endswith(b"\n")
        head.rmdir()
        head.write_bytes(kept_head)
        # The same open log carries on: the unsigned line is moved aside first.
        log.use_signer(signer)
        after = log.append("tool.executed", executed("after"))
    (torn,) = sorted(log_path.parent.glob("audit.jsonl.torn-*"))
    assert torn.read_bytes() == unsigned
    records = list(read_records(log_path))
    assert [r.event for r in records[-2:]] == ["log.recovered", "tool.executed"]
    assert records[-2].data["reason"] == "unsigned-tail"
    assert records[-1] == after
    assert verify_log(log_path, keys).decision == "intact"


_WRITE_PAST_LIMIT = """
import resource, signal, sys
from audit import LogWriteError
from audit.log import AuditLog
from tests.audit.audit_testkit import FixedSigner, executed
path, limit = sys.argv[1], int(sys.argv[2])
signer = FixedSigner(bytes(range(32)))
log = AuditLog.open(path, signer, signer.keys)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    log.append("tool.executed", executed("too-far"))
except LogWriteError as exc:
    print(exc.path)
    print(exc.problem)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print(log.append("tool.executed", executed("later")).seq)
log.close()
"""


def test_a_record_that_cannot_be_written_whole_leaves_no_partial_line_behind(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    # The file size limit lets the first bytes of the line through, then fails the write.
    _fill(log_path, signer, 2)
    before = log_path.read_bytes()
    head = log_path.with_name("audit.jsonl.head").read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_PAST_LIMIT, str(log_path), str(len(before) + 40)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines() == [
        str(log_path),
        f"cannot write a record: {os.strerror(errno.EFBIG)}",
        "3",  # the same open log carries on once the file may grow again
    ]
    lines = log_path.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:-1]) == before
    assert b"later" in lines[-1] and b"too-far" not in log_path.read_bytes()
    assert log_path.with_name("audit.jsonl.head").read_bytes() != head
    assert verify_log(log_path, keys).decision == "intact"
