"""The fault-injection soak: confirmations through the real sidecar while things go wrong.

One driver (this process) talks JSON-RPC to one sidecar process at a time, the way the pi
extension does (``evaluate``, ``record``, ``consume``, ``audit.toolExecuted``), and injects
faults from a seeded plan:

* ``kill``: SIGKILL the sidecar while a request is in flight (often mid-append), restart;
* ``disk-full``: restart the sidecar with ``RLIMIT_FSIZE`` just above the log's size, so
  writes fail with ``EFBIG`` for a while; then restart it without the limit;
* ``ledger-lock`` / ``ledger-lock-long``: this process holds the ledger's write lock for a
  moment (the sidecar waits) or past the sidecar's busy timeout (consume fails cleanly);
* ``clock-jump``: restart the sidecar with its clock stepped forward or back (and back to
  true time on the next jump); after every jump, earlier envelopes are replayed.

Everything the sidecar answered is remembered; :func:`check` then proves the invariants.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.verify import read_records, verify_log
from guard.evidence import KeyStore

LAUNCHER = Path(__file__).with_name("sidecar_launcher.py")
FAULTS = ("kill", "disk-full", "ledger-lock", "ledger-lock-long", "clock-jump")
# Per confirmation; every fault also happens at least ``MINIMUM`` times in any run.
RATES = {
    "kill": 1 / 120,
    "disk-full": 1 / 600,
    "ledger-lock": 1 / 150,
    "ledger-lock-long": 1 / 4000,
    "clock-jump": 1 / 400,
}
MINIMUM = {"kill": 3, "disk-full": 1, "ledger-lock": 2, "ledger-lock-long": 1, "clock-jump": 2}
JUMPS = (-3600, -120, -40, 40, 120, 3600, 86400)
INTERNAL_ERROR = -32603
CALL_TIMEOUT = 60.0


class SoakFailure(AssertionError):
    """An invariant broke or the sidecar misbehaved; the message says which and where."""


class Process:
    """One sidecar incarnation: a pipe pair, JSON-RPC calls, and its stderr in a file."""

    def __init__(self, home: Path, stderr: Path, env: dict[str, str]) -> None:
        self.stderr_path = stderr
        with stderr.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(LAUNCHER), str(home)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env={**os.environ, **env},
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        self._buffer = b""
        self._next = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        line = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        self._in.write(json.dumps(line).encode() + b"\n")
        self._in.flush()
        return self._next

    def receive(self, request_id: int, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SoakFailure(f"the sidecar did not answer request {request_id} in {timeout}s")
            ready, _, _ = select.select([self._fd], [], [], left)
            if ready:
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    raise SoakFailure(
                        f"the sidecar exited (code {self.proc.wait()}) before answering "
                        f"request {request_id}; stderr: {self.stderr_tail()}"
                    )
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        if reply.get("jsonrpc") != "2.0" or reply.get("id") != request_id:
            raise SoakFailure(f"reply out of order or malformed: {reply!r:.300}")
        return reply

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.receive(self.send(method, params))

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._close_pipes()

    def stop(self) -> int:
        """Close stdin (what pi does at session end) and wait for a clean exit."""
        self._in.close()
        code = self.proc.wait(timeout=60)
        self._close_pipes()
        return code

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-2000:]


@dataclass
class Observed:
    """What the sidecar said, and what the driver did to it."""

    recorded: dict[str, str] = field(default_factory=dict)  # evidence id -> tool call id
    declined: set[str] = field(default_factory=set)  # tool call ids
    consumed: Counter[str] = field(default_factory=Counter)  # evidence id -> "consumed" replies
    rejected: Counter[str] = field(default_factory=Counter)  # evidence id -> rejected replies
    rejections: Counter[str] = field(default_factory=Counter)  # reason -> count
    executed: set[str] = field(default_factory=set)  # tool call ids
    errors: Counter[str] = field(default_factory=Counter)  # JSON-RPC error reason -> count
    faults: Counter[str] = field(default_factory=Counter)
    unanswered: int = 0  # requests in flight when the sidecar was killed
    torn_tails: list[bytes] = field(default_factory=list)  # bytes past the head after a kill
    restarts: int = 0
    confirmations: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "confirmations": self.confirmations,
            "recorded": len(self.recorded),
            "consumed": sum(self.consumed.values()),
            "rejected": dict(self.rejections),
            "errors": dict(self.errors),
            "faults": dict(self.faults),
            "restarts": self.restarts,
            "unanswered": self.unanswered,
            "tornTails": len([t for t in self.torn_tails if t]),
        }


def fault_plan(confirmations: int, rng: random.Random) -> dict[int, str]:
    """Which fault happens before which confirmation (at most one each).

    Clock jumps come in the last fifth: after a step back, a careful ledger may refuse
    evidence for as long as the step was (failing closed), and the other faults need
    consumable evidence to show anything.
    """
    plan: dict[int, str] = {}
    cut = max(4, confirmations * 4 // 5)
    early = list(range(3, cut))
    late = list(range(cut, max(confirmations, cut + 1)))
    rng.shuffle(early)
    rng.shuffle(late)
    for fault in FAULTS:
        slots = late if fault == "clock-jump" else early
        count = max(MINIMUM[fault], round(confirmations * RATES[fault]))
        for _ in range(count):
            if slots:
                plan[slots.pop()] = fault
    return plan


class Driver:
    """Runs the soak in ``root`` (a temporary directory)."""

    def __init__(self, root: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        (self.project / "build").mkdir(parents=True)
        self.logs = root / "stderr"
        self.logs.mkdir()
        self.seen = Observed()
        self.offset = 0
        self.fsize: int | None = None
        self.jumps = 0
        self._calls = itertools.count()
        self.consumed_envelopes: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.proc = self._start()

    # -- process management ------------------------------------------------------------

    def _start(self) -> Process:
        env = {
            "PI_OPERATOR_GUARD_SOAK_CLOCK_OFFSET_S": str(self.offset),
            "PI_OPERATOR_GUARD_SOAK_FSIZE": "",
        }
        if self.fsize is not None:
            env["PI_OPERATOR_GUARD_SOAK_FSIZE"] = str(self.fsize)
        self.seen.restarts += 1
        proc = Process(self.home, self.logs / f"sidecar-{self.seen.restarts:05d}.log", env)
        health = proc.call("health", {})
        if "result" not in health:
            raise SoakFailure(f"health failed: {health}")
        return proc

    def _restart(self) -> None:
        if self.proc.stop() != 0:
            raise SoakFailure(f"the sidecar exited non-zero: {self.proc.stderr_tail()}")
        self.proc = self._start()

    @property
    def log_path(self) -> Path:
        return self.home / "audit.jsonl"

    # -- one confirmation ------------------------------------------------------------------

    def _params(self) -> dict[str, Any]:
        index = next(self._calls)
        return {
            "toolName": "bash",
            "input": {"command": f"rm -rf build/{index}"},
            "cwd": str(self.project),
            "toolCallId": f"call-{index}",
        }

    def _note_error(self, reply: dict[str, Any]) -> bool:
        if "error" not in reply:
            return False
        error = reply["error"]
        if error["code"] == INTERNAL_ERROR:
            raise SoakFailure(f"internal error (an exception escaped a handler): {error}")
        self.seen.errors[error.get("data", {}).get("reason", str(error["code"]))] += 1
        return True

    def _consume(self, envelope: dict[str, Any], params: dict[str, Any]) -> None:
        reply = self.proc.call("consume", {**params, "envelope": envelope})
        if self._note_error(reply):
            return
        result = reply["result"]
        eid = envelope["details"]["evidenceId"]
        if result["decision"] == "consumed":
            self.seen.consumed[eid] += 1
            self.consumed_envelopes.append((envelope, params))
            if self.seen.consumed[eid] > 1:
                raise SoakFailure(
                    f"evidence {eid} was consumed twice (clock offset now {self.offset}s)"
                )
        else:
            self.seen.rejected[eid] += 1
            self.seen.rejections[",".join(result["reasons"])] += 1

    def confirmation(self) -> None:
        params = self._params()
        reply = self.proc.call("evaluate", params)
        if self._note_error(reply):
            return
        if reply["result"]["action"] != "confirm":
            raise SoakFailure(f"a destructive call was not sent to the operator: {reply}")
        confirmed = self.rng.random() < 0.9
        ttl = self.rng.choice((30, 600))
        reply = self.proc.call("record", {**params, "confirmed": confirmed, "ttlSeconds": ttl})
        if self._note_error(reply):
            return
        record = reply["result"]
        if not confirmed:
            assert record["decision"] == "declined", record
            self.seen.declined.add(params["toolCallId"])
            return
        assert record["decision"] == "recorded", record
        envelope = record["envelope"]
        self.seen.recorded[envelope["details"]["evidenceId"]] = params["toolCallId"]
        self._consume(envelope, params)
        reply = self.proc.call(
            "audit.toolExecuted",
            {**params, "isError": False, "evidenceId": envelope["details"]["evidenceId"]},
        )
        if not self._note_error(reply):
            self.seen.executed.add(params["toolCallId"])
        if self.consumed_envelopes and self.rng.random() < 0.05:
            self._replay(1)

    def _replay(self, count: int) -> None:
        """Offer already-consumed envelopes again, for their own calls: never consumed twice."""
        pool = self.consumed_envelopes
        for envelope, params in self.rng.sample(pool, min(count, len(pool))):
            self._consume(envelope, params)

    # -- faults -------------------------------------------------------------------------------

    def _tail_after_head(self) -> bytes:
        """The bytes after the record the signed head names (what recovery must move aside)."""
        head_path = self.log_path.with_name("audit.jsonl.head")
        size_line = head_path.read_bytes().split(b"\n")[1]  # checkpoint: origin, size, root
        head_seq = int(size_line) - 1
        with self.log_path.open("rb") as stream:
            size = stream.seek(0, os.SEEK_END)
            start = max(0, size - (1 << 20))  # a line is at most 256 KiB; two lines suffice
            stream.seek(start)
            data = stream.read()
        lines = data.splitlines(keepends=True)
        offset = len(data)
        for line in reversed(lines):
            offset -= len(line)
            if line.endswith(b"\n") and f'"seq":{head_seq},'.encode() in line:
                rec = json.loads(line)
                if rec["seq"] == head_seq:
                    return data[offset + len(line) :]
        raise SoakFailure(f"after a kill, no line matches the signed head (seq {head_seq})")

    def kill(self) -> None:
        # Kill while a request is in flight: often during an fsync-ed append.
        params = self._params()
        method = self.rng.choice(("record", "record", "consume", "audit.toolExecuted", "evaluate"))
        extra: dict[str, Any] = {}
        if method == "record":
            extra = {"confirmed": True}
        elif method == "audit.toolExecuted":
            extra = {"isError": True}
        elif method == "consume":
            reply = self.proc.call("record", {**params, "confirmed": True})
            if self._note_error(reply):
                return
            envelope = reply["result"]["envelope"]
            self.seen.recorded[envelope["details"]["evidenceId"]] = params["toolCallId"]
            extra = {"envelope": envelope}
        self.proc.send(method, {**params, **extra})
        time.sleep(self.rng.choice((0, 0.0005, 0.001, 0.002, 0.004)))
        self.proc.kill()
        self.seen.unanswered += 1
        tail = self._tail_after_head()
        if tail.count(b"\n") > 1 or (tail.count(b"\n") == 1 and not tail.endswith(b"\n")):
            raise SoakFailure(f"more than one unsigned line after a kill: {tail[:300]!r}")
        self.seen.torn_tails.append(tail)
        before = set(self.home.glob("audit.jsonl.torn-*"))
        self.proc = self._start()
        if tail:
            moved = set(self.home.glob("audit.jsonl.torn-*")) - before
            if len(moved) != 1 or next(iter(moved)).read_bytes() != tail:
                raise SoakFailure("the torn tail was not moved aside byte for byte on restart")

    def disk_full(self) -> None:
        size = self.log_path.stat().st_size
        self.fsize = max(size, 1 << 16) + self.rng.randrange(0, 4096)
        self._restart()
        for _ in range(self.rng.randrange(3, 12)):
            self.confirmation()
        self.fsize = None
        self._restart()

    def ledger_lock(self, hold: float) -> None:
        db = sqlite3.connect(self.home / "ledger.sqlite3", timeout=30, check_same_thread=False)
        db.isolation_level = None
        db.execute("BEGIN IMMEDIATE")

        def release() -> None:
            db.execute("COMMIT")
            db.close()

        timer = threading.Timer(hold, release)
        timer.start()
        try:
            # Confirmations keep coming while another process holds the write lock.
            for _ in range(3):
                self.confirmation()
        finally:
            timer.join()

    def clock_jump(self) -> None:
        """Step the clock away from true time, or back to it; then replay old envelopes.

        The first step of every run goes forward past the longest TTL, so the next step
        (back to true time) exercises a guard that started under a clock from the future.
        """
        if self.offset:
            self.offset = 0
        else:
            self.offset = JUMPS[-2] if self.jumps == 0 else self.rng.choice(JUMPS)
        self.jumps += 1
        self._restart()
        self._replay(6)

    def close(self) -> None:
        """Kill a sidecar still running after a failure (the normal end stops it cleanly)."""
        if self.proc.proc.poll() is None:
            self.proc.kill()

    def run(self, confirmations: int) -> Observed:
        plan = fault_plan(confirmations, self.rng)
        for index in range(confirmations):
            fault = plan.get(index)
            if fault is not None:
                self.seen.faults[fault] += 1
                if fault == "kill":
                    self.kill()
                elif fault == "disk-full":
                    self.disk_full()
                elif fault == "ledger-lock":
                    self.ledger_lock(self.rng.uniform(0.05, 0.8))
                elif fault == "ledger-lock-long":
                    self.ledger_lock(5.6)  # past the sidecar's 5 s busy timeout
                else:
                    self.clock_jump()
            self.confirmation()
            self.seen.confirmations += 1
        if self.offset:
            self.offset = 0
        self._restart()
        self._replay(10)
        if self.proc.stop() != 0:
            raise SoakFailure(f"the sidecar did not exit cleanly: {self.proc.stderr_tail()}")
        return self.seen


def check(root: Path, seen: Observed) -> dict[str, Any]:
    """Prove the invariants on what is on disk after the soak; return a summary."""
    home = root / "home"
    log = home / "audit.jsonl"
    keys = KeyStore.open(home).public_keyring().public_keys()
    result = verify_log(log, keys)
    if result.decision != "intact":
        raise SoakFailure(f"the audit log does not verify: {result.fault} at {result.line}")
    consumed_in_log: Counter[str] = Counter()
    rejected_in_log: Counter[str] = Counter()
    recorded_in_log: set[str] = set()
    declined_in_log: set[str] = set()
    executed_in_log: set[str] = set()
    recovered: list[dict[str, Any]] = []
    for record in read_records(log):
        data = record.data
        if record.event == "evidence.consumed":
            consumed_in_log[data["evidenceId"]] += 1
        elif record.event == "evidence.rejected" and "evidenceId" in data:
            rejected_in_log[data["evidenceId"]] += 1
        elif record.event == "confirmation.recorded":
            recorded_in_log.add(data["evidenceId"])
        elif record.event == "confirmation.declined" and "toolCallId" in data:
            declined_in_log.add(data["toolCallId"])
        elif record.event == "tool.executed":
            executed_in_log.add(data["toolCallId"])
        elif record.event == "log.recovered":
            recovered.append(data)
    twice = sorted(eid for eid, n in consumed_in_log.items() if n > 1)
    if twice:
        raise SoakFailure(f"evidence consumed more than once in the log: {twice[:5]}")
    if any(n > 1 for n in seen.consumed.values()):
        raise SoakFailure("the sidecar answered 'consumed' twice for one evidence id")
    missing = {
        "confirmation.recorded": sorted(set(seen.recorded) - recorded_in_log),
        "confirmation.declined": sorted(seen.declined - declined_in_log),
        "evidence.consumed": sorted(set(seen.consumed) - set(consumed_in_log)),
        "evidence.rejected": sorted(
            eid for eid, n in seen.rejected.items() if rejected_in_log[eid] < n
        ),
        "tool.executed": sorted(seen.executed - executed_in_log),
    }
    if any(missing.values()):
        shown = {event: ids[:3] for event, ids in missing.items() if ids}
        raise SoakFailure(f"appends that returned success are missing from the log: {shown}")
    torn = sorted(home.glob("audit.jsonl.torn-*"))
    tails = [t for t in seen.torn_tails if t]
    if len(recovered) != len(torn) or len(torn) < len(tails):
        raise SoakFailure(
            f"{len(tails)} torn tails after kills, {len(torn)} quarantine files, "
            f"{len(recovered)} log.recovered records"
        )
    for data in recovered:
        moved = home / data["quarantinedTo"]
        if not moved.exists() or moved.stat().st_size != data["bytes"]:
            raise SoakFailure(f"log.recovered names {data['quarantinedTo']}, which does not match")
    for stderr in sorted((root / "stderr").glob("*.log")):
        text = stderr.read_text(errors="replace")
        if "Traceback" in text:
            raise SoakFailure(f"a traceback in {stderr.name}: {text[-1500:]}")
    db = sqlite3.connect(home / "ledger.sqlite3")
    try:
        ledger_ids = {row[0] for row in db.execute("SELECT evidence_id FROM consumed")}
    finally:
        db.close()
    return {
        **seen.summary(),
        "auditRecords": result.records,
        "quarantined": len(torn),
        # Burnt in the ledger by a consume that was killed before its audit append.
        "consumedWithoutAuditRecord": len(ledger_ids - set(consumed_in_log)),
    }
