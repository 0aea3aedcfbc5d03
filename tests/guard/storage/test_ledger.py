"""Single use across real OS processes and restarts (SQLite ledger)."""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from guard import LedgerError
from guard._evidence.consume import check_and_consume
from guard._evidence.envelope import mint_envelope
from guard._evidence.fingerprint import compute_fingerprint
from guard._evidence.keys import KeyStore
from guard.evidence import SqliteLedger

CALL = {"command": "rm -rf build"}


def _consume_worker(
    home: str, project: str, envelope: str, start: mp.synchronize.Event, results: mp.Queue[str]
) -> None:
    store = KeyStore(Path(home))
    ledger = SqliteLedger.open(Path(home) / "ledger.sqlite3")
    pending = compute_fingerprint("destructive", "bash", CALL, project)
    keyring = store.public_keyring()
    start.wait()
    result = check_and_consume(
        envelope, pending, keyring=keyring, ledger=ledger, now=datetime.now(UTC)
    )
    ledger.close()
    results.put(result.match.decision)


@pytest.mark.slow
def test_many_processes_race_exactly_one_wins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = KeyStore.open(home)
    signer, _ = store.ensure_key()
    SqliteLedger.open(home / "ledger.sqlite3").close()
    ctx = mp.get_context("fork")
    rounds, workers = 12, 8
    for _ in range(rounds):
        env = mint_envelope(
            signer,
            compute_fingerprint("destructive", "bash", CALL, tmp_path),
            origin="runtime-ui-confirm",
            ttl_seconds=60,
            now=datetime.now(UTC),
        )
        text = json.dumps(env.model_dump(mode="json"))
        start = ctx.Event()
        results: mp.Queue[str] = ctx.Queue()
        procs = [
            ctx.Process(
                target=_consume_worker, args=(str(home), str(tmp_path), text, start, results)
            )
            for _ in range(workers)
        ]
        for p in procs:
            p.start()
        start.set()
        outcomes = sorted(results.get(timeout=60) for _ in procs)
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        assert outcomes.count("match") == 1, outcomes
        assert outcomes.count("consumed") == workers - 1, outcomes


def test_replay_rejected_after_restart(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    now = datetime.now(UTC)
    first = SqliteLedger.open(path)
    assert first.try_consume("oce_x", now + timedelta(seconds=30), now) == "inserted"
    first.close()
    second = SqliteLedger.open(path)
    assert second.try_consume("oce_x", now + timedelta(seconds=30), now) == "already-consumed"
    second.close()


def test_prune_removes_only_expired_past_skew(tmp_path: Path) -> None:
    ledger = SqliteLedger.open(tmp_path / "l.sqlite3")
    now = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
    skew = timedelta(seconds=5)
    ledger.try_consume("old", now - timedelta(seconds=6), now)
    ledger.try_consume("edge", now - timedelta(seconds=4), now)
    ledger.try_consume("live", now + timedelta(seconds=30), now)
    assert ledger.prune(now, skew) == 1
    assert ledger.try_consume("edge", now, now) == "already-consumed"
    assert ledger.try_consume("live", now, now) == "already-consumed"
    assert ledger.try_consume("old", now, now) == "inserted"
    ledger.close()


def test_locked_ledger_is_a_clear_error_and_consumes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    SqliteLedger.open(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        # Opening may already fail (WAL setup needs the lock); if not, the insert must.
        try:
            locked = SqliteLedger.open(path, busy_timeout_ms=100)
        except LedgerError as exc:
            message = str(exc)
        else:
            message = "opened"
        if message != "opened":
            assert "locked" in message
        else:
            with pytest.raises(LedgerError, match="locked"):
                locked.try_consume("oce_y", datetime.now(UTC), datetime.now(UTC))
            locked.close()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    again = SqliteLedger.open(path)
    assert again.try_consume("oce_y", datetime.now(UTC), datetime.now(UTC)) == "inserted"
    again.close()


def test_corrupted_ledger_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LedgerError, match="not a valid SQLite ledger"):
        SqliteLedger.open(path)


def test_a_clock_step_back_cannot_revive_a_pruned_id(tmp_path: Path) -> None:
    ledger = SqliteLedger.open(tmp_path / "l.sqlite3")
    now = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)
    expires = now + timedelta(seconds=600)
    assert ledger.try_consume("oce_a", expires, now) == "inserted"
    # The clock jumps an hour ahead, the ledger prunes, the clock comes back.
    assert ledger.prune(now + timedelta(hours=1), timedelta(seconds=5)) == 1
    assert ledger.try_consume("oce_a", expires, now) == "forgotten"
    assert ledger.try_consume("oce_new", expires, now) == "forgotten"
    later = now + timedelta(hours=2)
    assert ledger.try_consume("oce_b", later, now) == "inserted"
    assert ledger.try_consume("oce_b", later, now) == "already-consumed"
    # The prune point never moves back.
    assert ledger.prune(now, timedelta(seconds=5)) == 0
    assert ledger.try_consume("oce_a", expires, now) == "forgotten"
    ledger.close()
