"""The PostgreSQL server crashes and restarts in the middle of a consume race.

Several processes consume the same ids in different orders while the server is stopped
the way a crash stops it (``pg_ctl -m immediate``: no shutdown checkpoint) and started
again. Each worker writes an id down only after ``"inserted"`` came back. Afterwards:
nothing acknowledged is lost (every acknowledged id is in the ledger), and nothing is
consumed twice (no id was acknowledged to two workers, and no id can be consumed again).
"""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from guard import LedgerError
from guard._storage.pg_ledger import PgLedger
from tests.processes import racers
from tools.postgres import PostgresServer

NOW = datetime.now(UTC)
IDS = [f"ev-{n:05d}" for n in range(1500)]
WORKERS = 6


def _worker(url: str, seed: int, out: str, ready: Any, go: Any) -> None:
    order = list(IDS)
    random.Random(seed).shuffle(order)
    ledger = PgLedger.open(url, source=f"worker-{seed}")
    ready.put(seed)
    go.wait()
    with open(out, "a", encoding="utf-8") as acks:
        for eid in order:
            try:
                outcome = ledger.try_consume(eid, NOW + timedelta(minutes=5), NOW)
            except LedgerError:
                outcome = "error"
                time.sleep(0.01)
            acks.write(f"{eid} {outcome}\n")
            acks.flush()
            os.fsync(acks.fileno())
    ledger.close()


@pytest.mark.slow
def test_restart_mid_race_loses_nothing_and_consumes_nothing_twice(tmp_path: Path) -> None:
    server = PostgresServer().start()
    try:
        PgLedger.open(server.url(), source="setup").close()
        ctx = racers()
        go = ctx.Event()
        ready = ctx.Queue()
        outs = [tmp_path / f"w{n}.txt" for n in range(WORKERS)]
        procs = [
            ctx.Process(target=_worker, args=(server.url(), n, str(outs[n]), ready, go))
            for n in range(WORKERS)
        ]
        for p in procs:
            p.start()
        # Every worker is connected before the race starts: on a loaded machine a late
        # starter would otherwise meet the restarting server at its first connection.
        for _ in procs:
            ready.get(timeout=300)
        go.set()
        deadline = time.monotonic() + 60
        while sum(_lines(o) for o in outs) < len(IDS) and time.monotonic() < deadline:
            time.sleep(0.05)  # let a good part of the race happen first
        server.restart(mode="immediate")
        for p in procs:
            p.join(timeout=300)
            assert p.exitcode == 0
        acked: dict[str, int] = {}
        errors = 0
        for n, out in enumerate(outs):
            for line in out.read_text().splitlines():
                eid, outcome = line.split()
                if outcome == "inserted":
                    assert eid not in acked, f"{eid} consumed by workers {acked[eid]} and {n}"
                    acked[eid] = n
                errors += outcome == "error"
        assert errors > 0, "the restart should have failed some consumes (fail closed)"
        with psycopg.connect(server.url()) as db:
            stored = {row[0] for row in db.execute("SELECT evidence_id FROM pi_guard.consumed")}
        assert set(acked) <= stored, "an acknowledged consumption was lost"
        # Ids whose consume failed may or may not have landed; none can be consumed now.
        again = PgLedger.open(server.url(), source="after")
        try:
            for eid in sorted(stored):
                assert again.try_consume(eid, NOW + timedelta(minutes=5), NOW) != "inserted"
        finally:
            again.close()
    finally:
        server.stop()


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0
