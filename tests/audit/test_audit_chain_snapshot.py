"""``open_snapshot``, the reader's way into a log, and ``Chain`` fed whole records.

The snapshot must never hang on a pipe named as the log, must not leak its descriptor into
programs started while it is open, must name the file in every refusal, and must still read a
log where ``flock`` is refused (some network file systems) without unlocking what it never
locked. ``Chain.accept`` links each record to the hash of the one before it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from pathlib import Path

import pytest

from audit._errors import LogLineError, LogNotAFileError, LogWriteError
from audit._records.chain import Chain, check_body, open_snapshot
from audit.log import AuditLog
from tests.audit.audit_testkit import FixedSigner, executed

SIGNER = FixedSigner(b"\x31" * 32)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, SIGNER, SIGNER.keys) as opened:
        for i in range(3):
            opened.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
    return path


def test_a_fifo_named_as_the_log_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            open_snapshot(fifo, with_head=True)
        except BaseException as exc:  # recorded for the main thread
            outcome.append(exc)
        else:
            outcome.append(None)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # a blocking open waits for a writer forever: give it one
        with open(fifo, "wb"):
            pass
        reader.join(10)
        pytest.fail("opening a FIFO named as the log waited for a writer")
    assert len(outcome) == 1 and isinstance(outcome[0], LogNotAFileError)
    assert (outcome[0].path, outcome[0].problem) == (
        str(fifo),
        "not a regular file, so not an audit log",
    )


def test_a_directory_named_as_the_log_is_refused_with_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "audit.jsonl"
    folder.mkdir()
    with pytest.raises(LogNotAFileError) as err:
        open_snapshot(folder, with_head=False)
    assert str(err.value) == f"{folder}: not a regular file, so not an audit log"


def test_a_log_that_cannot_be_opened_is_a_write_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"")
    path = blocker / "audit.jsonl"  # a path through a file: ENOTDIR, not "not found"
    with pytest.raises(LogWriteError) as err:
        open_snapshot(path, with_head=True)
    assert (err.value.path, err.value.problem) == (
        str(path),
        f"cannot open: {os.strerror(errno.ENOTDIR)}",
    )


def test_the_snapshot_descriptor_is_not_inherited_by_other_programs(log: Path) -> None:
    stream, size, head = open_snapshot(log, with_head=True)
    with stream:
        flags = fcntl.fcntl(stream.fileno(), fcntl.F_GETFD)
        assert flags & fcntl.FD_CLOEXEC
        assert size == log.stat().st_size and head is not None


def test_a_log_is_read_where_flock_is_refused_and_nothing_is_unlocked(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def refused(fd: int, operation: int) -> None:
        calls.append(operation)
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", refused)
    stream, size, head = open_snapshot(log, with_head=True)
    with stream:
        assert stream.read() == log.read_bytes()
    assert size == log.stat().st_size
    assert head == log.with_name("audit.jsonl.head").read_bytes()
    assert calls == [fcntl.LOCK_SH]  # no LOCK_UN of a lock never taken


def test_accept_links_each_record_to_the_hash_of_the_one_before(log: Path) -> None:
    records = [check_body(line) for line in log.read_bytes().splitlines()]
    chain = Chain()
    for record in records:
        chain.accept(record)
    assert (chain.next_seq, chain.prev) == (len(records), records[-1]["hash"])
    relinked = Chain()
    relinked.accept(records[0])
    relinked.accept(records[1])
    with pytest.raises(LogLineError) as err:
        relinked.accept(dict(records[2], prev=records[0]["hash"]))  # linked past record 1
    assert (err.value.kind, err.value.detail) == (
        "prev-mismatch",
        "prev is not the hash of record 1",
    )


def test_a_first_record_that_is_not_log_created_is_refused_with_its_words(log: Path) -> None:
    records = [check_body(line) for line in log.read_bytes().splitlines()]
    first = dict(records[1], seq=0)
    with pytest.raises(LogLineError) as err:
        Chain().accept_parts(first["seq"], first["event"], first["data"], first["prev"], "x")
    assert (err.value.kind, err.value.detail) == (
        "genesis-invalid",
        "record 0 is not a log.created event",
    )


@pytest.mark.parametrize(
    "data",
    [{}, {"logId": 7}, {"logId": "not a log id"}, {"logId": "x", "extra": True}],
    ids=["empty", "number", "bad-id", "extra-field"],
)
def test_a_log_created_record_0_with_invalid_data_is_refused_with_its_words(
    log: Path, data: dict[str, object]
) -> None:
    first = check_body(log.read_bytes().splitlines()[0])
    with pytest.raises(LogLineError) as err:
        Chain().accept_parts(0, "log.created", data, first["prev"], first["hash"])
    assert (err.value.kind, err.value.detail) == (
        "genesis-invalid",
        "record 0 has invalid log.created data",
    )
    Chain().accept_parts(0, "log.created", first["data"], first["prev"], first["hash"])


def test_record_0_that_does_not_chain_from_its_log_id_is_refused_with_its_words(
    log: Path,
) -> None:
    first = check_body(log.read_bytes().splitlines()[0])
    chain = Chain()
    with pytest.raises(LogLineError) as err:
        chain.accept_parts(0, "log.created", first["data"], "0" * 64, first["hash"])
    assert (err.value.kind, err.value.detail) == (
        "prev-mismatch",
        "record 0 does not chain from its log id",
    )
    chain.accept_parts(0, "log.created", first["data"], first["prev"], first["hash"])
    assert (chain.log_id, chain.prev, chain.next_seq) == (
        first["data"]["logId"],
        first["hash"],
        1,
    )
