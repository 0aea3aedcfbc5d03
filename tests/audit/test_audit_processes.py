"""Real processes: SIGKILL at random moments, and many appenders on one log at once."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit.log import AuditLog
from audit.verify import read_records, verify_log
from tests.audit.audit_testkit import FixedSigner, executed

CHILD = Path(__file__).with_name("appender_child.py")


def _appender_loop(path: Path, seed: bytes, wfd: int) -> None:
    """Body of a forked child: append forever, reporting each returned append."""
    status = 0
    try:
        signer = FixedSigner(seed)
        with AuditLog.open(path, signer, signer.keys) as log:
            i = 0
            while True:
                rec = log.append("tool.executed", executed(f"{os.getpid()}-{i}", f"cmd {i}"))
                os.write(wfd, f"{rec.seq} {rec.hash}\n".encode())
                i += 1
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _read_reports(rfd: int, until: float, buffer: bytearray) -> None:
    while True:
        timeout = until - time.monotonic()
        if timeout <= 0:
            return
        ready, _, _ = select.select([rfd], [], [], timeout)
        if not ready:
            return
        chunk = os.read(rfd, 65536)
        if not chunk:
            return
        buffer.extend(chunk)


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_returned_record(
    tmp_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    rng = random.Random(20261122)
    acknowledged: dict[int, str] = {}
    seed = bytes(range(32))
    for round_no in range(40):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            os.close(rfd)
            _appender_loop(path, seed, wfd)
        os.close(wfd)
        buffer = bytearray()
        try:
            # Let the child finish one append first (however loaded the machine is), then
            # kill it at a random moment: usually in the middle of a later append.
            deadline = time.monotonic() + 30
            while b"\n" not in buffer and time.monotonic() < deadline:
                _read_reports(rfd, time.monotonic() + 0.05, buffer)
            _read_reports(rfd, time.monotonic() + rng.uniform(0.0, 0.04), buffer)
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            assert os.WIFSIGNALED(status), f"round {round_no}: child exited early ({status})"
            _read_reports(rfd, time.monotonic() + 1.0, buffer)
        finally:
            os.close(rfd)
        for report in bytes(buffer).split(b"\n")[:-1]:
            seq, record_hash = report.decode().split()
            acknowledged[int(seq)] = record_hash

        # Reopening recovers; the log is then intact and holds every acknowledged record.
        AuditLog.open(path, signer, signer.keys).close()
        result = verify_log(path, keys)
        assert result.decision == "intact", (round_no, result)
        present = {r.seq: r.hash for r in read_records(path)}
        missing = {s: h for s, h in acknowledged.items() if present.get(s) != h}
        assert not missing, (round_no, sorted(missing)[:5])

    records = list(read_records(path))
    recovered = [r for r in records if r.event == "log.recovered"]
    torn_files = sorted(path.parent.glob("audit.jsonl.torn-*"))
    assert len(acknowledged) >= 40  # at least one returned append per round
    assert recovered, "no kill landed inside an append; the test proved nothing"
    assert {r.data["quarantinedTo"] for r in recovered} <= {p.name for p in torn_files}


@pytest.mark.slow
def test_many_processes_append_to_one_log(
    tmp_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "shared" / "audit.jsonl"
    AuditLog.open(path, signer, signer.keys).close()
    per_child = 40
    children = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(path), bytes(range(32)).hex(), str(per_child), tag],
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("p0", "p1", "p2", "p3")
    ]
    # The parent appends at the same time, from two threads sharing one AuditLog.
    with AuditLog.open(path, signer, signer.keys) as log:

        def work(tag: str) -> None:
            for i in range(20):
                log.append("tool.executed", executed(f"{tag}-{i}", f"{tag} {i}"))

        threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    reported: dict[int, str] = {}
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        for line in out.splitlines():
            seq, record_hash = line.split()
            assert int(seq) not in reported
            reported[int(seq)] = record_hash

    result = verify_log(path, keys)
    assert result.decision == "intact", result
    records = list(read_records(path))
    assert [r.seq for r in records] == list(range(1 + 4 * per_child + 40))
    assert all(records[seq].hash == h for seq, h in reported.items())
    calls = [r.data["toolCallId"] for r in records[1:]]
    assert len(set(calls)) == len(calls)
    assert not list(path.parent.glob("audit.jsonl.torn-*"))


def test_two_log_objects_in_one_process_interleave(
    tmp_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    with (
        AuditLog.open(path, signer, signer.keys) as a,
        AuditLog.open(path, signer, signer.keys) as b,
    ):
        for i in range(10):
            a.append("tool.executed", executed(f"a{i}"))
            b.append("tool.executed", executed(f"b{i}"))
    assert verify_log(path, keys).decision == "intact"
    assert [r.seq for r in read_records(path)] == list(range(21))
