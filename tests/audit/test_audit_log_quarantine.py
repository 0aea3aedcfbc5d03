"""Where a crash's leftovers go: the ``<log>.torn-<timestamp>`` quarantine file.

A torn tail is copied to a free name (``base``, ``base-2`` ... ``base-999``; an existing
file is never written into), copied whole however large, and the log is truncated back
to its head only after the copy. When no name is free or the copy fails, the appender
says so with the log's path and leaves the log as it was.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from freezegun import freeze_time

from audit import LogWriteError
from audit.log import AuditLog
from audit.verify import read_records, verify_log
from audit.wire import AuditRecord
from tests.audit.audit_testkit import FixedSigner, executed, keyring

NOW = "2026-11-22T05:06:07.089Z"
BASE = "audit.jsonl.torn-20261122T050607.089Z"
TAIL = b'{"data":{"keyId":"ed25519:00'


def _torn_log(path: Path, signer: FixedSigner, tail: bytes = TAIL) -> bytes:
    """A log of three records with ``tail`` (no line feed) after its head; returns the
    good part."""
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(2):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
    good = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(tail)
    return good


def _recovered(path: Path) -> AuditRecord:
    records = list(read_records(path))
    assert records[-1].event == "log.recovered"
    return records[-1]


def _torn_names(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob(path.name + ".torn-*"))


def _taken(directory: Path, count: int) -> dict[str, bytes]:
    """Occupy the first ``count`` quarantine names with files of their own."""
    names = [BASE] + [f"{BASE}-{n}" for n in range(2, count + 1)]
    taken = {name: f"earlier {name}".encode() for name in names[:count]}
    for name, content in taken.items():
        (directory / name).write_bytes(content)
    return taken


@pytest.mark.parametrize(
    ("taken", "expected"),
    [(0, BASE), (1, f"{BASE}-2"), (2, f"{BASE}-3"), (998, f"{BASE}-999")],
)
def test_a_torn_tail_goes_to_the_first_free_name_and_taken_ones_are_left_alone(
    log_path: Path,
    signer: FixedSigner,
    keys: dict[str, Ed25519PublicKey],
    taken: int,
    expected: str,
) -> None:
    good = _torn_log(log_path, signer)
    earlier = _taken(log_path.parent, taken)
    with freeze_time(NOW):
        AuditLog.open(log_path, signer, signer.keys).close()

    assert (log_path.parent / expected).read_bytes() == TAIL
    for name, content in earlier.items():
        assert (log_path.parent / name).read_bytes() == content
    assert _torn_names(log_path) == sorted([*earlier, expected])
    recovered = _recovered(log_path)
    assert recovered.data == {"quarantinedTo": expected, "bytes": len(TAIL), "reason": "torn-line"}
    assert log_path.read_bytes().startswith(good)
    assert verify_log(log_path, keys).decision == "intact"


def test_no_free_name_after_999_attempts_is_an_error_naming_the_log(
    log_path: Path, signer: FixedSigner
) -> None:
    _torn_log(log_path, signer)
    damaged = log_path.read_bytes()
    earlier = _taken(log_path.parent, 999)  # base, base-2 ... base-999
    with freeze_time(NOW), pytest.raises(LogWriteError) as err:
        AuditLog.open(log_path, signer, signer.keys)

    assert err.value.path == str(log_path)
    assert err.value.problem == "cannot find a free quarantine file name"
    assert str(err.value) == f"{log_path}: cannot find a free quarantine file name"
    assert log_path.read_bytes() == damaged
    assert _torn_names(log_path) == sorted(earlier)
    assert not (log_path.parent / f"{BASE}-1000").exists()


def test_a_copy_that_fails_is_an_error_naming_the_log_and_the_log_is_kept(
    tmp_path: Path, signer: FixedSigner
) -> None:
    # A log whose name leaves no room for ".torn-<timestamp>" (255 bytes per name):
    # the quarantine file cannot be created, so nothing may be truncated.
    short = tmp_path / "audit.jsonl"
    _torn_log(short, signer)
    damaged = short.read_bytes()
    long_name = "a" * 224 + ".jsonl"
    log_path = tmp_path / long_name
    short.rename(log_path)
    short.with_name("audit.jsonl.head").rename(tmp_path / (long_name + ".head"))

    with pytest.raises(LogWriteError) as err:
        AuditLog.open(log_path, signer, signer.keys)

    reason = os.strerror(errno.ENAMETOOLONG)
    assert err.value.path == str(log_path)
    assert err.value.problem == f"cannot quarantine a torn tail: {reason}"
    assert str(err.value) == f"{log_path}: cannot quarantine a torn tail: {reason}"
    assert log_path.read_bytes() == damaged
    assert _torn_names(log_path) == []


@pytest.mark.parametrize("length", [1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 5 * (1 << 19) + 7])
def test_a_torn_tail_of_any_size_is_copied_whole(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey], length: int
) -> None:
    # The copy goes in chunks of 1 MiB; a crash can leave a torn line of any length.
    tail = bytes(range(256)).replace(b"\n", b"") * (length // 255 + 1)
    tail = tail[:length]
    good = _torn_log(log_path, signer, tail)
    with freeze_time(NOW):
        AuditLog.open(log_path, signer, signer.keys).close()
    assert (log_path.parent / BASE).read_bytes() == tail
    assert _recovered(log_path).data["bytes"] == length
    assert log_path.read_bytes().startswith(good)
    assert verify_log(log_path, keys).decision == "intact"


def _reloading_keys(
    first: Mapping[str, Ed25519PublicKey],
    then: Mapping[str, Ed25519PublicKey],
    meanwhile: Callable[[], None],
) -> Callable[[], Mapping[str, Ed25519PublicKey]]:
    """A key source that knows ``first``, and on being asked again (the head names a key
    it did not have) runs ``meanwhile`` once and answers ``then``."""
    calls: list[int] = []

    def source() -> Mapping[str, Ed25519PublicKey]:
        calls.append(1)
        if len(calls) == 1:
            return first
        if len(calls) == 2:
            meanwhile()
        return then

    return source


def test_the_quarantine_holds_exactly_the_bytes_counted_even_if_the_log_grew_meanwhile(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    # Bytes written without the lock after the appender measured the log are not part
    # of the tail it judged: the quarantine file holds what log.recovered counts.
    good = _torn_log(log_path, signer)

    def grow() -> None:
        with log_path.open("ab") as handle:
            handle.write(b"written later without the lock")

    both = keyring(signer, other_signer)
    source = _reloading_keys(other_signer.keys, both, grow)
    with freeze_time(NOW):
        AuditLog.open(log_path, other_signer, source).close()

    assert (log_path.parent / BASE).read_bytes() == TAIL
    assert _recovered(log_path).data == {
        "quarantinedTo": BASE,
        "bytes": len(TAIL),
        "reason": "torn-line",
    }
    assert log_path.read_bytes().startswith(good)
    assert verify_log(log_path, both).decision == "intact"


def test_a_tail_that_shrank_meanwhile_is_copied_as_far_as_it_goes_and_recovery_completes(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    good = _torn_log(log_path, signer)

    def shrink() -> None:
        os.truncate(log_path, len(good) + 4)

    both = keyring(signer, other_signer)
    source = _reloading_keys(other_signer.keys, both, shrink)
    with freeze_time(NOW):
        AuditLog.open(log_path, other_signer, source).close()

    assert _torn_names(log_path) == [BASE]
    assert (log_path.parent / BASE).read_bytes() == TAIL[:4]
    recovered = _recovered(log_path)
    assert recovered.data["quarantinedTo"] == BASE
    assert recovered.seq == 3
    assert log_path.read_bytes().startswith(good)
    assert verify_log(log_path, both).decision == "intact"
