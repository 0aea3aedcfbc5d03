"""PostgreSQL ledger: consume latency and throughput with 1, 4 and 16 clients.

A throwaway server on 127.0.0.1 (tools/postgres.py, the tests' own; fsync on, the
server's defaults otherwise). Each client is a spawned process with its own connection;
clients wait on a barrier, then each runs ``per_client`` operations and keeps every
operation's latency. Ours is :meth:`PgLedger.try_consume` (one call of the
``pi_guard.consume`` function: watermark read ``FOR SHARE``, ``INSERT … ON CONFLICT DO
NOTHING``, commit with ``synchronous_commit=on``). The floor is a bare autocommit
``INSERT`` of a fresh id into a one-column table on the same server with the same
connection settings: the least a durable, networked single-use insert costs. Floor and
ours alternate per repeat; medians count.
"""

from __future__ import annotations

import multiprocessing as mp
import secrets
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Barrier
from pathlib import Path
from queue import Queue
from typing import Any

from harness import Row, percentile

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # tools/ is not installed; bench/run.py runs as a script
    sys.path.insert(0, str(REPO))

from tools.postgres import PostgresMissing, PostgresServer  # noqa: E402

SECTION = "postgres"


def _now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _ours_worker(url: str, count: int, barrier: Barrier, out: Queue[Any]) -> None:
    from guard._storage.pg_ledger import PgLedger

    ledger = PgLedger.open(url, source="bench")
    now = datetime.now(UTC)
    expires = now + timedelta(minutes=10)
    ids = [secrets.token_hex(16) for _ in range(count)]
    barrier.wait()
    lat: list[float] = []
    started = _now()
    for eid in ids:
        t0 = _now()
        if ledger.try_consume(eid, expires, now) != "inserted":
            raise AssertionError("a fresh id was not inserted")
        lat.append(_now() - t0)
    out.put((started, _now(), lat))
    ledger.close()


def _floor_worker(url: str, count: int, barrier: Barrier, out: Queue[Any]) -> None:
    from guard._storage.postgres import connect

    db = connect(url)
    ids = [secrets.token_hex(16) for _ in range(count)]
    barrier.wait()
    lat: list[float] = []
    started = _now()
    for eid in ids:
        t0 = _now()
        db.execute("INSERT INTO bench_floor (id) VALUES (%s)", (eid,))
        lat.append(_now() - t0)
    out.put((started, _now(), lat))
    db.close()


def _group(target: Any, url: str, clients: int, count: int) -> tuple[float, list[float]]:
    """Operations per second of the whole group, and every operation's latency."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(clients)
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(url, count, barrier, out)) for _ in range(clients)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        if proc.exitcode != 0:
            raise RuntimeError(f"benchmark worker failed with exit code {proc.exitcode}")
    span = max(r[1] for r in results) - min(r[0] for r in results)
    latencies = [x for r in results for x in r[2]]
    return len(latencies) / span, latencies


def run(
    work: Path, clients: list[int], per_client: int, repeats: int = 3
) -> tuple[list[Row], dict[str, Any]]:
    del work  # the server keeps its cluster in its own temporary directory
    try:
        server = PostgresServer().start()
    except PostgresMissing as missing:
        return [], {"skipped": str(missing)}
    try:
        import psycopg

        from guard._storage.pg_ledger import PgLedger

        url = server.url()
        PgLedger.open(url, source="setup").close()  # creates the schema
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE TABLE bench_floor (id text PRIMARY KEY)")
        rows: list[Row] = []
        detail: dict[str, Any] = {"perClient": per_client, "repeats": repeats}
        for n in clients:
            runs = []
            for _ in range(repeats):
                floor = _group(_floor_worker, url, n, per_client)
                ours = _group(_ours_worker, url, n, per_client)
                runs.append((ours, floor))
            tput = statistics.median(o[0] for o, _ in runs)
            floor_tput = statistics.median(f[0] for _, f in runs)
            lat = [x for o, _ in runs for x in o[1]]
            floor_lat = [x for _, f in runs for x in f[1]]
            p50, fp50 = percentile(lat, 0.5) * 1000, percentile(floor_lat, 0.5) * 1000
            p99, fp99 = percentile(lat, 0.99) * 1000, percentile(floor_lat, 0.99) * 1000
            detail[str(n)] = {
                "oursOpsPerSecond": [round(o[0], 1) for o, _ in runs],
                "floorOpsPerSecond": [round(f[0], 1) for _, f in runs],
            }
            label = f"{n} client{'s' if n > 1 else ''}"
            rows += [
                Row(SECTION, f"consume, {label}, p50", "ms", p50, fp50,
                    f"bare INSERT x{n} p50", "lower"),
                Row(SECTION, f"consume, {label}, p99", "ms", p99, fp99,
                    f"bare INSERT x{n} p99", "lower"),
                Row(SECTION, f"consume, {label}, throughput", "ops/s", tput, floor_tput,
                    f"bare INSERT x{n}", "higher"),
            ]  # fmt: skip
        return rows, detail
    finally:
        server.stop()
