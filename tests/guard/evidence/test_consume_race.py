"""Many consumers of one envelope at once: exactly one consumes, every other is a replay.

Sixteen consumer processes on one guard home race for the same envelope, round after round,
on the SQLite ledger and on a shared PostgreSQL one. Each consume first syncs the ledger from
the audit log the others are appending to; that sync once made some of them fail with a
state error (exit 6, "the ledger's log position keeps moving") instead of a replay (exit 3).
"""

from __future__ import annotations

import json
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from guard import Guard
from guard._cli.exits import exit_for
from guard._facade.guard import AUDIT_LOG_FILE
from tests.processes import racers

CALL = {"command": "rm -rf build"}
WORKERS = 16
ROUNDS = 100
EARLIER = 40  # consumed before the race starts: the log is not a fresh one


def _consumer(home: str, project: str, rounds: int, barrier: Any, results: Any, index: int) -> None:
    """One consumer for all the rounds, like a sidecar or monitor that stays up: its own
    guard on the shared home, each consume answered with the exit code ``pi-guard consume``
    gives (0 consumed, 3 rejected, else what our error maps to)."""
    try:
        guard = Guard.open(home)
        barrier.wait(timeout=300)  # every consumer is up before the first envelope is minted
        for r in range(rounds):
            barrier.wait(timeout=120)
            envelope = (Path(home).parent / f"round-{r}.json").read_text(encoding="utf-8")
            try:
                result = guard.consume(envelope, "bash", CALL, project)
            except Exception as exc:
                known = exit_for(exc)
                results.put((r, index, -1 if known is None else int(known[0]), str(exc)))
                continue
            results.put((r, index, 0 if result.decision == "consumed" else 3, ""))
        guard.close()
    except BaseException:
        results.put((-1, index, -1, traceback.format_exc()))
        raise


@pytest.mark.slow  # 16 processes x 100 rounds per ledger: about 10 s and 20 CPU-s each on 2 cores
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sixteen_consumers_race_one_consumes_the_rest_are_replays(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What it measures: in each of 100 rounds, 16 processes (started once, so the rounds
    cost consumes rather than interpreter start-ups) wait at a barrier for the round's fresh
    envelope, then all consume it at once: each syncs the ledger from the log while the
    others append their results to it, then races for the id. Every round must give exactly
    one exit 0 and fifteen exit 3 (replay), never 6 (the guard's state unusable); the log
    must hold one ``evidence.consumed`` per envelope."""
    if backend == "postgresql":
        monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", request.getfixturevalue("pg_url"))
    home, project = tmp_path / "guard", tmp_path / "project"
    project.mkdir()
    ctx = racers()
    barrier = ctx.Barrier(WORKERS + 1)
    results = ctx.Queue()
    with Guard.open(home) as g:
        for _ in range(EARLIER):
            rec = g.record("bash", CALL, project, confirmed=True)
            assert rec.envelope is not None
            done = g.consume(rec.envelope.model_dump(mode="json"), "bash", CALL, project)
            assert done.decision == "consumed"
        procs = [
            ctx.Process(
                target=_consumer, args=(str(home), str(project), ROUNDS, barrier, results, i)
            )
            for i in range(WORKERS)
        ]
        for p in procs:
            p.start()
        try:
            # A round's envelope lives 30 s: on a loaded machine sixteen interpreter start-ups
            # (spawned, before tests.processes) took longer, and round 0 expired before
            # anyone consumed it.
            barrier.wait(timeout=300)
            ids: list[str] = []
            bad: list[str] = []
            for r in range(ROUNDS):
                rec = g.record("bash", CALL, project, confirmed=True)
                assert rec.envelope is not None and rec.evidence_id is not None
                ids.append(rec.evidence_id)
                envelope = json.dumps(rec.envelope.model_dump(mode="json"))
                (tmp_path / f"round-{r}.json").write_text(envelope, encoding="utf-8")
                barrier.wait(timeout=120)
                got = [results.get(timeout=120) for _ in procs]
                assert {row[0] for row in got} == {r}
                codes = sorted(row[2] for row in got)
                if codes != [0] + [3] * (WORKERS - 1):
                    errors = sorted({row[3] for row in got if row[3]})
                    bad.append(f"round {r}: exits {codes}; {errors[:3]}")
        finally:
            barrier.abort()  # a consumer still waiting (the test failed early) stops
            for p in procs:
                p.join(timeout=60)
                if p.is_alive():
                    p.kill()
    assert bad == [], "\n".join(bad)
    assert [p.exitcode for p in procs] == [0] * WORKERS
    consumed = Counter(
        r.data.get("evidenceId")
        for r in read_records(home / AUDIT_LOG_FILE)
        if r.event == "evidence.consumed"
    )
    assert [consumed[i] for i in ids] == [1] * ROUNDS
