"""A lost ledger never forgets: the audit log's ``evidence.consumed`` records rebuild it.

Attacks from a hostile same-user process on the real files: delete, empty, truncate or
overwrite ``ledger.sqlite3``, or put back a stale copy, then replay consumed evidence.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from freezegun import freeze_time

from audit.verify import read_records
from audit.wire import utc_now
from guard import Guard, LedgerError
from guard._evidence.consume import DEFAULT_SKEW
from guard._evidence.resync import sync_ledger
from guard._facade.guard import AUDIT_LOG_FILE, LEDGER_FILE
from guard._facade.monitor import Monitor
from guard._storage import SqliteLedger
from guard.evidence import KeyStore

CALL = {"command": "rm -rf build"}


def _mint(home: Path, project: Path) -> dict[str, Any]:
    with Guard.open(home) as g:
        rec = g.record("bash", CALL, project, confirmed=True)
        assert rec.envelope is not None
        return rec.envelope.model_dump(mode="json")


def _consume(home: Path, project: Path, env: dict[str, Any]) -> Any:
    with Guard.open(home) as g:
        return g.consume(env, "bash", CALL, project)


def _delete(ledger: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        ledger.with_name(ledger.name + suffix).unlink(missing_ok=True)


def _empty(ledger: Path) -> None:
    _delete(ledger)
    ledger.write_bytes(b"")


def _truncate(ledger: Path) -> None:
    data = ledger.read_bytes()
    _delete(ledger)
    ledger.write_bytes(data[: len(data) // 2] if len(data) > 4096 else data[:100])


def _garbage(ledger: Path) -> None:
    _delete(ledger)
    ledger.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)


def _rows_deleted(ledger: Path) -> None:
    db = sqlite3.connect(ledger)
    db.execute("DELETE FROM consumed")
    db.execute("DELETE FROM synced")
    db.commit()
    db.close()


def _fresh_schema(ledger: Path) -> None:
    _delete(ledger)
    SqliteLedger.open(ledger).close()


LOSSES: dict[str, Callable[[Path], None]] = {
    "deleted": _delete,
    "emptied": _empty,
    "truncated": _truncate,
    "garbage": _garbage,
    "rows-and-position-deleted": _rows_deleted,
    "replaced-by-a-fresh-ledger": _fresh_schema,
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_replay_after_ledger_loss_is_rejected(tmp_path: Path, loss: str) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    assert _consume(home, tmp_path, env).decision == "consumed"
    LOSSES[loss](home / LEDGER_FILE)
    again = _consume(home, tmp_path, env)
    assert (again.decision, again.match.decision, again.reasons) == (
        "rejected",
        "consumed",
        ("replay",),
    )


def test_stale_copy_of_the_ledger_is_caught_up(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    first = _mint(home, tmp_path)
    assert _consume(home, tmp_path, first).decision == "consumed"
    stale = tmp_path / "stale.sqlite3"
    with Guard.open(home) as g:  # checkpoint so the copy is one self-contained file
        g.ledger._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(home / LEDGER_FILE, stale)
    second = _mint(home, tmp_path)
    assert _consume(home, tmp_path, second).decision == "consumed"
    _delete(home / LEDGER_FILE)
    shutil.copyfile(stale, home / LEDGER_FILE)
    for env in (first, second):
        assert _consume(home, tmp_path, env).reasons == ("replay",)


def test_corrupt_ledger_is_set_aside_not_deleted(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    assert _consume(home, tmp_path, env).decision == "consumed"
    _garbage(home / LEDGER_FILE)
    assert _consume(home, tmp_path, env).reasons == ("replay",)
    assert (home / f"{LEDGER_FILE}.corrupt-0").exists()


def test_normal_open_reads_only_new_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    assert _consume(home, tmp_path, env).decision == "consumed"
    calls: list[object] = []
    import guard._evidence.resync as resync

    real = resync.verify_log
    monkeypatch.setattr(resync, "verify_log", lambda *a, **k: calls.append(a) or real(*a, **k))
    with Guard.open(home) as g:
        position = g.ledger.position()
        assert position is not None
        keys = g.public_keyring().public_keys()
        # The consume's own evidence.consumed record came after its sync: read it now.
        assert sync_ledger(g.ledger, g.audit.path, keys) == 1
        assert sync_ledger(g.ledger, g.audit.path, keys) == 0
        assert calls == []  # incremental: no full verification
        after = g.ledger.position()
        assert after is not None and after.seq >= position.seq


def test_log_rewritten_under_the_ledger_refuses(tmp_path: Path) -> None:
    """A stale ledger over a log whose consumed record was dropped: re-read, verify, refuse."""
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    assert _consume(home, tmp_path, env).decision == "consumed"
    _delete(home / LEDGER_FILE)
    log = home / AUDIT_LOG_FILE
    lines = log.read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"evidence.consumed"' not in line]
    log.write_bytes(b"".join(kept))
    keys = KeyStore(home).public_keyring().public_keys()
    ledger = SqliteLedger.open(home / LEDGER_FILE)
    try:
        with pytest.raises(LedgerError, match="does not verify"):
            sync_ledger(ledger, log, keys)
    finally:
        ledger.close()


def test_a_broken_line_after_the_position_refuses(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    with Guard.open(home) as g:
        assert g.consume(env, "bash", CALL, tmp_path).decision == "consumed"
        with (home / AUDIT_LOG_FILE).open("ab") as f:
            f.write(b'{"seq": 999}\n')
        with pytest.raises(LedgerError):
            sync_ledger(g.ledger, g.audit.path, g.public_keyring().public_keys())


def test_missing_log_refuses_when_required(tmp_path: Path) -> None:
    ledger = SqliteLedger.open(tmp_path / "l.sqlite3")
    try:
        with pytest.raises(LedgerError):
            sync_ledger(ledger, tmp_path / "none.jsonl", None)
        assert sync_ledger(ledger, tmp_path / "none.jsonl", None, require_log=False) == 0
    finally:
        ledger.close()


def _stored_expiry(home: Path, pg_url: str | None, evidence_id: str) -> datetime | None:
    if pg_url is None:
        db = sqlite3.connect(home / LEDGER_FILE)
        try:
            sql = "SELECT expires_at_ms FROM consumed WHERE evidence_id = ?"
            row = db.execute(sql, (evidence_id,)).fetchone()
        finally:
            db.close()
    else:
        with psycopg.connect(pg_url) as pg:
            sql = "SELECT expires_at_ms FROM pi_guard.consumed WHERE evidence_id = %s"
            row = pg.execute(sql, (evidence_id,)).fetchone()
    return None if row is None else datetime.fromtimestamp(row[0] / 1000, UTC)


def _lose_ledger(home: Path, pg_url: str | None) -> None:
    if pg_url is None:
        _delete(home / LEDGER_FILE)
        return
    with psycopg.connect(pg_url) as pg:
        pg.execute("DELETE FROM pi_guard.consumed")
        pg.execute("DELETE FROM pi_guard.synced")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_rebuilt_ids_expire_no_earlier_than_the_evidence(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consumed id rebuilt from the log keeps an expiry no earlier than the evidence's own,
    so a prune cannot drop it while the evidence is still valid; a replay after that prune is
    refused on the guard's path and on a verify-only monitor's (the same consume path)."""
    pg_url = request.getfixturevalue("pg_url") if backend == "postgresql" else None
    if pg_url is not None:
        monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", pg_url)
    home = tmp_path / "guard"
    # Near the real time: the PostgreSQL ledger never prunes far past its server's clock.
    t0 = datetime.now(UTC).replace(microsecond=0)
    with freeze_time(t0) as clock:
        with Guard.open(home) as g:
            rec = g.record("bash", CALL, tmp_path, confirmed=True, ttl_seconds=600)
            later = g.record("bash", CALL, tmp_path, confirmed=True, ttl_seconds=600)
        assert rec.envelope is not None and rec.evidence_id is not None
        assert later.envelope is not None
        env = rec.envelope.model_dump(mode="json")
        expires = t0 + timedelta(seconds=600)
        clock.tick(60)
        assert _consume(home, tmp_path, env).decision == "consumed"
        _lose_ledger(home, pg_url)
        clock.tick(1)
        # The next consume (other evidence) rebuilds the ledger from the log.
        assert _consume(home, tmp_path, later.envelope.model_dump(mode="json")).decision == (
            "consumed"
        )
        stored = _stored_expiry(home, pg_url, rec.evidence_id)
        assert stored is not None and stored >= expires, (stored, expires)
        clock.tick(120)  # well past the consumption, well before the evidence expires
        with Guard.open(home) as g:  # opening prunes
            g.ledger.prune(utc_now(), DEFAULT_SKEW)
        assert _stored_expiry(home, pg_url, rec.evidence_id) == stored
        monitor = Monitor.open(home)
        try:
            seen = monitor.consume(env, "bash", CALL, str(tmp_path))
        finally:
            monitor.close()
        assert (seen.decision, seen.reasons) == ("rejected", ("replay",))
        assert _consume(home, tmp_path, env).reasons == ("replay",)


def test_ledger_without_the_audit_log_refuses_to_consume(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    with Guard.open(home) as g:
        g.audit.path.rename(tmp_path / "moved.jsonl")
        with pytest.raises(LedgerError):
            g.consume(env, "bash", CALL, tmp_path)


def test_consumed_records_are_in_the_log(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    _consume(home, tmp_path, env)
    events = [r.event for r in read_records(home / AUDIT_LOG_FILE)]
    assert "evidence.consumed" in events


def _rows_deleted_position_kept(ledger: Path) -> None:
    db = sqlite3.connect(ledger)
    db.execute("DELETE FROM consumed")
    db.commit()
    db.close()


def _position_forged_forward(ledger: Path) -> None:
    db = sqlite3.connect(ledger)
    db.execute("DELETE FROM consumed")
    db.execute("UPDATE synced SET seq = seq + 1000, end_offset = end_offset + 100000")
    db.commit()
    db.close()


@pytest.mark.parametrize("edit", [_rows_deleted_position_kept, _position_forged_forward])
def test_ledger_edited_in_place_still_rejects_a_replay(
    tmp_path: Path, edit: Callable[[Path], None]
) -> None:
    """The log's recent evidence.consumed records are checked for the id itself."""
    home = tmp_path / "guard"
    env = _mint(home, tmp_path)
    with Guard.open(home) as g:
        assert g.consume(env, "bash", CALL, tmp_path).decision == "consumed"
        sync_ledger(g.ledger, g.audit.path, g.public_keyring().public_keys())
    edit(home / LEDGER_FILE)
    assert _consume(home, tmp_path, env).reasons == ("replay",)
