"""Scaling: consume with 1, 2, 4, 8 processes on one ledger and one audit log; audit
append with 1..8 appenders on one log. Each against the same floor run with as many
processes (the floor appender takes the same ``flock``).

Workers are spawned, open everything, wait on a barrier, then run; throughput is all
operations over the span from the first start to the last finish (``CLOCK_MONOTONIC``
is one clock for every process).
"""

from __future__ import annotations

import multiprocessing as mp
import secrets
import statistics
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path
from queue import Queue
from typing import Any

from bench_inprocess import COMMAND, floor_payloads
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from floors import RawLog, insert_once, open_ledger
from harness import Row

from audit.log import AuditLog
from guard import Guard
from guard.evidence import KeyStore

SECTION = "scaling"
# One process consuming envelopes one after another keeps at least half the floor's rate.
GOAL_ONE_PROCESS_CONSUME = 0.5
_DATA = {
    "toolCallId": "call_bench",
    "toolName": "bash",
    "isError": False,
    "actionKind": "destructive",
    "payloadHash": "sha256:" + "ab" * 32,
    "path": "/srv/project/build",
    "scope": "/srv/project",
}


def _now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _consume_worker(
    home: str, cwd: str, envelopes: list[dict[str, Any]], barrier: Barrier, out: Queue[Any]
) -> None:
    with Guard.open(home) as guard:
        barrier.wait()
        started = _now()
        for envelope in envelopes:
            result = guard.consume(envelope, "bash", COMMAND, cwd)
            if result.decision != "consumed":
                raise AssertionError(result.summary)
        out.put((started, _now(), len(envelopes)))


def _floor_consume_worker(
    work: str,
    message: bytes,
    line: bytes,
    head: bytes,
    count: int,
    barrier: Barrier,
    out: Queue[Any],
) -> None:
    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    signature = key.sign(message)
    db = open_ledger(Path(work) / "floor-ledger.sqlite3")
    log = RawLog(Path(work) / "floor.jsonl", locked=True)
    barrier.wait()
    started = _now()
    for _ in range(count):
        public.verify(signature, message)
        if not insert_once(db, secrets.token_hex(16)):
            raise AssertionError("fresh id already present")
        log.append(line, head, key.sign)
    out.put((started, _now(), count))
    log.close()
    db.close()


def _append_worker(home: str, log_path: str, count: int, barrier: Barrier, out: Queue[Any]) -> None:
    store = KeyStore.open(Path(home))
    signer = store.load_signer()
    with AuditLog.open(log_path, signer, store.public_keyring().public_keys()) as log:
        barrier.wait()
        started = _now()
        for _ in range(count):
            log.append("tool.executed", _DATA)
        out.put((started, _now(), count))


def _floor_append_worker(
    log_path: str, line: bytes, head: bytes, count: int, barrier: Barrier, out: Queue[Any]
) -> None:
    key = Ed25519PrivateKey.generate()
    log = RawLog(Path(log_path), locked=True)
    barrier.wait()
    started = _now()
    for _ in range(count):
        log.append(line, head, key.sign)
    out.put((started, _now(), count))
    log.close()


def _run_group(target: Any, args_per_worker: list[tuple[Any, ...]]) -> float:
    """Start one spawned process per args tuple; return the group's operations per second."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(len(args_per_worker))
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, out)) for args in args_per_worker]
    for proc in procs:
        proc.start()
    results: list[tuple[float, float, int]] = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        if proc.exitcode != 0:
            raise RuntimeError(f"benchmark worker failed with exit code {proc.exitcode}")
    start = min(r[0] for r in results)
    end = max(r[1] for r in results)
    return sum(r[2] for r in results) / (end - start)


def run(
    work: Path, counts: list[int], per_process: int, repeats: int = 3
) -> tuple[list[Row], dict[str, Any]]:
    """Each configuration runs ``repeats`` times, floor and ours alternating; medians count."""
    project = work / "project"
    (project / "build").mkdir(parents=True, exist_ok=True)
    cwd = str(project)
    home = work / "scaling-home"
    rows: list[Row] = []
    detail: dict[str, Any] = {"perProcess": per_process, "repeats": repeats}
    with Guard.open(home) as guard:
        message, line, head = floor_payloads(guard, cwd)

        def mint(n: int) -> list[list[dict[str, Any]]]:
            batches = []
            for _ in range(n):
                batch = []
                for _ in range(per_process):
                    rec = guard.record("bash", COMMAND, cwd, confirmed=True, ttl_seconds=600)
                    assert rec.envelope is not None
                    batch.append(rec.envelope.model_dump(mode="json"))
                batches.append(batch)
            return batches

        envelopes = {(n, r): mint(n) for n in counts for r in range(repeats)}

    def consume_pair(n: int, r: int) -> tuple[float, float]:
        floor_dir = work / f"floor-consume-{n}-{r}"
        floor_dir.mkdir()
        floor = _run_group(
            _floor_consume_worker, [(str(floor_dir), message, line, head, per_process)] * n
        )
        ours = _run_group(_consume_worker, [(str(home), cwd, b) for b in envelopes[n, r]])
        return ours, floor

    def append_pair(n: int, r: int) -> tuple[float, float]:
        floor_path = work / f"floor-append-{n}-{r}.jsonl"
        floor = _run_group(_floor_append_worker, [(str(floor_path), line, head, per_process)] * n)
        log_path = work / f"append-{n}-{r}.jsonl"
        ours = _run_group(_append_worker, [(str(home), str(log_path), per_process)] * n)
        return ours, floor

    for kind, pair, label, floor_name in (
        ("consume", consume_pair, "consume, {n} process(es), one ledger", "floor consume x{n}"),
        ("append", append_pair, "audit append, {n} appender(s), one log",
         "flock+sign+append+head x{n}"),
    ):  # fmt: skip
        detail[kind] = {}
        base = 0.0
        for n in counts:
            runs = [pair(n, r) for r in range(repeats)]
            ours = statistics.median(o for o, _ in runs)
            floor = statistics.median(f for _, f in runs)
            base = base or ours
            detail[kind][str(n)] = {
                "ours": [round(o, 1) for o, _ in runs],
                "floor": [round(f, 1) for _, f in runs],
            }
            rows.append(
                Row(SECTION, label.format(n=n), "ops/s", ours, floor, floor_name.format(n=n),
                    "higher", GOAL_ONE_PROCESS_CONSUME if (kind, n) == ("consume", 1) else None,
                    note=f"{ours / base:.2f}x our 1-process throughput")
            )  # fmt: skip
    return rows, detail
