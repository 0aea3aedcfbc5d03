"""The same soak in-process: freezegun clock jumps, injected ``ENOSPC``, a locking process.

Where the sidecar soak needs a launcher to shift a subprocess's clock, here freezegun moves
the clock of this very process, and a full disk is an ``OSError(ENOSPC)`` raised half way
through a write (the appender must truncate the partial line, or leave an unsigned one for
recovery, never a glued or lost record).
"""

from __future__ import annotations

import errno
import random
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

import audit._writing.files
from audit import AuditError
from audit.verify import read_records, verify_log
from guard import Guard, GuardError
from guard.evidence import SqliteLedger

pytestmark = pytest.mark.integration

COMMAND = {"command": "rm -rf build"}


class DiskFull:
    """Arms ``ENOSPC`` for the next N writes of the audit appender (half the bytes land)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.remaining = 0
        self.fired = 0
        real = audit._writing.files.write_all

        def write_all(fd: int, data: bytes) -> None:
            if self.remaining > 0:
                self.remaining -= 1
                self.fired += 1
                real(fd, data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")
            real(fd, data)

        monkeypatch.setattr(audit._writing.files, "write_all", write_all)


def hold_ledger_lock(path: Path, seconds: float) -> subprocess.Popen[bytes]:
    """Another process takes the ledger's write lock and holds it; returns once it has it."""
    code = textwrap.dedent(
        f"""
        import sqlite3, sys, time
        db = sqlite3.connect({str(path)!r}, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        sys.stdout.write("locked\\n"); sys.stdout.flush()
        time.sleep({seconds})
        db.execute("COMMIT")
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"locked\n"
    return proc


@pytest.fixture
def clock() -> Iterator[Any]:
    with freeze_time(datetime(2026, 11, 22, 1, 0, tzinfo=UTC), tick=True) as frozen:
        yield frozen


def open_guard(home: Path) -> Guard:
    guard = Guard.open(home)
    # A short busy timeout keeps a held lock from costing the full 5 s default here.
    guard.ledger.close()
    guard.ledger = SqliteLedger.open(guard.ledger.path, busy_timeout_ms=300)
    return guard


def test_clock_step_forward_then_back_cannot_revive_a_consumed_id(
    tmp_path: Path, clock: Any
) -> None:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    with Guard.open(tmp_path / "home") as guard:
        rec = guard.record("bash", COMMAND, project, confirmed=True, ttl_seconds=600)
        assert rec.envelope is not None
        envelope = rec.envelope.model_dump(mode="json")
        assert guard.consume(envelope, "bash", COMMAND, project).decision == "consumed"
    clock.move_to(datetime(2026, 11, 22, 2, 0, tzinfo=UTC))  # NTP steps an hour ahead ...
    Guard.open(tmp_path / "home").close()  # ... while the guard restarts (and prunes)
    clock.move_to(datetime(2026, 11, 22, 1, 1, tzinfo=UTC))  # ... and back again
    with Guard.open(tmp_path / "home") as guard:
        replay = guard.consume(envelope, "bash", COMMAND, project)
    assert replay.decision == "rejected", "a consumed evidence id was revived by a clock step"


def test_in_process_soak_with_clock_jumps_full_disk_and_a_locking_process(
    tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    home = tmp_path / "home"
    disk = DiskFull(monkeypatch)
    guard = open_guard(home)
    committed: dict[str, set[str]] = {"recorded": set(), "consumed": set(), "executed": set()}
    consumed: Counter[str] = Counter()
    envelopes: list[dict[str, Any]] = []
    faults: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    locker: subprocess.Popen[bytes] | None = None
    try:
        for n in range(200):
            roll = rng.random()
            if roll < 0.06:
                faults["disk-full"] += 1
                disk.remaining = rng.randrange(1, 4)
            elif roll < 0.10:
                faults["clock-jump"] += 1
                clock.tick(timedelta(seconds=rng.choice((-700, -40, 40, 700))))
            elif roll < 0.13:
                faults["restart"] += 1
                guard.close()
                guard = open_guard(home)
            elif roll < 0.16 and locker is None:
                faults["ledger-lock"] += 1
                locker = hold_ledger_lock(guard.ledger.path, rng.choice((0.1, 0.6)))
            call_id = f"call-{n}"
            command = {"command": f"rm -rf build/{n}"}
            try:
                rec = guard.record(
                    "bash", command, project, confirmed=True, ttl_seconds=600, tool_call_id=call_id
                )
                assert rec.envelope is not None
                committed["recorded"].add(rec.envelope.details.evidence_id)
                envelope = rec.envelope.model_dump(mode="json")
                envelopes.append(envelope)
                result = guard.consume(envelope, "bash", command, project, tool_call_id=call_id)
                if result.decision == "consumed":
                    consumed[result.evidence_id or ""] += 1
                    committed["consumed"].add(result.evidence_id or "")
                guard.tool_executed(call_id, "bash", command, project, False, rec.evidence_id)
                committed["executed"].add(call_id)
                if rng.random() < 0.2:  # replay something old, for whichever call it was for
                    old = rng.choice(envelopes)
                    index = old["details"].get("toolCallId", "call-0").split("-")[1]
                    again = {"command": f"rm -rf build/{index}"}
                    replay = guard.consume(
                        old, "bash", again, project, tool_call_id=old["details"]["toolCallId"]
                    )
                    if replay.decision == "consumed":
                        consumed[replay.evidence_id or ""] += 1
            except (GuardError, AuditError) as exc:
                errors[type(exc).__name__] += 1
            if locker is not None and locker.poll() is not None:
                locker = None
    finally:
        if locker is not None:
            locker.wait(timeout=10)
        guard.close()
    disk.remaining = 0
    assert disk.fired > 0 and errors["LogWriteError"] > 0
    assert {"disk-full", "clock-jump", "restart", "ledger-lock"} <= set(faults)
    assert all(count == 1 for count in consumed.values()), "an evidence id was consumed twice"
    # Reopening recovers whatever a failed head write left behind; then the log is whole.
    with Guard.open(home) as reopened:
        keys = reopened.public_keyring().public_keys()
    assert verify_log(home / "audit.jsonl", keys).decision == "intact"
    seen: dict[str, set[str]] = {"recorded": set(), "consumed": set(), "executed": set()}
    for record in read_records(home / "audit.jsonl"):
        if record.event == "confirmation.recorded":
            seen["recorded"].add(record.data["evidenceId"])
        elif record.event == "evidence.consumed":
            seen["consumed"].add(record.data["evidenceId"])
        elif record.event == "tool.executed":
            seen["executed"].add(record.data["toolCallId"])
    for kind, ids in committed.items():
        assert ids <= seen[kind], f"{kind}: appends that returned are missing from the log"
