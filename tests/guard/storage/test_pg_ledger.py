"""The PostgreSQL ledger on a real server (the run's, tests/conftest.py): same semantics
as SQLite, single use across processes and hosts, fail closed when the server is gone."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from audit.verify import read_records
from guard import Guard, LedgerError
from guard._evidence.keys import KEYRING_FILE
from guard._facade.ledger import ledger_url
from guard._facade.monitor import Monitor
from guard._storage import LogPosition
from guard._storage.pg_ledger import PgLedger
from guard._storage.postgres import connect
from tests.processes import racers

pytestmark = pytest.mark.integration

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
CALL = {"command": "rm -rf build"}


def _open(url: str, source: str = "test") -> PgLedger:
    return PgLedger.open(url, source=source)


def test_one_winner_then_replay(pg_url: str) -> None:
    a, b = _open(pg_url), _open(pg_url)
    try:
        exp = NOW + timedelta(minutes=5)
        assert a.try_consume("ev-1", exp, NOW) == "inserted"
        assert b.try_consume("ev-1", exp, NOW) == "already-consumed"
        assert a.try_consume("ev-1", exp, NOW) == "already-consumed"
        assert b.try_consume("ev-2", exp, NOW) == "inserted"
        assert a.count() == 2
    finally:
        a.close()
        b.close()


def test_prune_watermark_survives_a_clock_step_back(pg_url: str) -> None:
    ledger = _open(pg_url)
    try:
        early = NOW + timedelta(minutes=1)
        assert ledger.try_consume("old", early, NOW) == "inserted"
        assert ledger.try_consume("new", NOW + timedelta(hours=1), NOW) == "inserted"
        # A host whose clock is ahead prunes through NOW + 10 min: "old" is forgotten.
        assert ledger.prune(NOW + timedelta(minutes=10), timedelta(0)) == 1
        assert ledger.count() == 1
        # Another host's clock is behind: its prune never lowers the watermark ...
        assert ledger.prune(NOW - timedelta(days=1), timedelta(0)) == 0
        # ... and "old" cannot be consumed again, on any host: refused as forgotten.
        other = _open(pg_url, "other-host")
        try:
            assert other.try_consume("old", early, NOW) == "forgotten"
        finally:
            other.close()
        assert ledger.try_consume("new", NOW + timedelta(hours=1), NOW) == "already-consumed"
    finally:
        ledger.close()


def test_position_is_per_source_and_absorb_checks_it(pg_url: str) -> None:
    one, two = _open(pg_url, "host-a:/home"), _open(pg_url, "host-b:/home")
    try:
        at = NOW
        pos = LogPosition("log-a", 3, 400, "a" * 64)
        assert one.position() is None
        assert one.absorb([("x", at + timedelta(minutes=5), at)], pos, None)
        assert one.position() == pos
        assert two.position() is None  # each source keeps its own place in its own log
        # A stale expectation: ids still go in, the position is left alone.
        later = LogPosition("log-a", 4, 500, "b" * 64)
        assert not one.absorb([("y", at + timedelta(minutes=5), at)], later, None)
        assert one.position() == pos
        assert two.try_consume("y", at + timedelta(minutes=5), at) == "already-consumed"
    finally:
        one.close()
        two.close()


def _race(url: str, barrier: Any, results: Any) -> None:
    ledger = PgLedger.open(url, source="racer")
    barrier.wait()
    results.put(ledger.try_consume("contested", NOW + timedelta(minutes=5), NOW))
    ledger.close()


@pytest.mark.slow  # 16 processes against a real server
def test_sixteen_processes_racing_on_one_id(pg_url: str) -> None:
    ctx = racers()
    barrier = ctx.Barrier(16)
    results = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(pg_url, barrier, results)) for _ in range(16)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sorted(outcomes).count("inserted") == 1
    assert outcomes.count("already-consumed") == 15


def test_connection_refused_fails_closed_without_the_password(postgres: Any) -> None:
    url = f"postgresql://guard:s3cret-pw@127.0.0.1:{_closed_port()}/guard?connect_timeout=2"
    with pytest.raises(LedgerError) as caught:
        PgLedger.open(url, source="x")
    text = str(caught.value)
    assert "s3cret-pw" not in text
    assert "consumption refused" in text
    assert "connection" in text


def test_server_gone_after_open_fails_closed_then_recovers(tmp_path: Path) -> None:
    from tools.postgres import PostgresServer

    server = PostgresServer().start()
    try:
        ledger = _open(server.url())
        exp = NOW + timedelta(minutes=5)
        assert ledger.try_consume("before", exp, NOW) == "inserted"
        server.kill()
        with pytest.raises(LedgerError, match="consumption refused"):
            ledger.try_consume("during", exp, NOW)
        with pytest.raises(LedgerError):
            ledger.try_consume("during", exp, NOW)
        server.resume()
        # Reconnects; what was acknowledged before the crash is still there.
        assert ledger.try_consume("before", exp, NOW) == "already-consumed"
        assert ledger.try_consume("during", exp, NOW) == "inserted"
        ledger.close()
    finally:
        server.stop()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_password_never_in_messages_when_authentication_fails(postgres: Any, pg_url: str) -> None:
    bad = pg_url.replace(postgres.password, "wrong-pw-123")
    with pytest.raises(LedgerError) as caught:
        _open(bad)
    assert "wrong-pw-123" not in str(caught.value)
    assert postgres.password not in str(caught.value)


# -- a guard and a monitor on two "hosts" share the ledger -----------------------------


def test_evidence_is_consumed_once_across_homes(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", pg_url)
    guard_home, monitor_home = tmp_path / "guard", tmp_path / "monitor"
    with Guard.open(guard_home) as g:
        rec = g.record("bash", CALL, tmp_path, confirmed=True)
        assert rec.envelope is not None
        envelope = rec.envelope.model_dump(mode="json")
    monitor_home.mkdir(mode=0o700)
    shutil.copyfile(guard_home / KEYRING_FILE, monitor_home / KEYRING_FILE)
    monitor = Monitor.open(monitor_home)
    try:
        first = monitor.consume(envelope, "bash", CALL, str(tmp_path))
    finally:
        monitor.close()
    assert first.decision == "consumed"
    with Guard.open(guard_home) as g:
        again = g.consume(envelope, "bash", CALL, tmp_path)
    assert (again.decision, again.reasons) == ("rejected", ("replay",))
    # The SQLite file in the home was never used.
    assert not (guard_home / "ledger.sqlite3").exists()


def test_an_unreachable_ledger_refuses_consumption_but_not_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard still opens, evaluates and records (asking the operator needs no ledger);
    consume fails closed: an error, nothing consumed and nothing audited as consumed."""
    url = f"postgresql://g:pw-xyz@127.0.0.1:{_closed_port()}/g?connect_timeout=2"
    monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", url)
    with Guard.open(tmp_path / "guard") as g:
        rec = g.record("bash", CALL, tmp_path, confirmed=True)
        assert rec.envelope is not None
        with pytest.raises(LedgerError) as caught:
            g.consume(rec.envelope.model_dump(mode="json"), "bash", CALL, tmp_path)
        events = [r.event for r in read_records(g.audit.path)]
    assert "pw-xyz" not in str(caught.value)
    assert "consumption refused" in str(caught.value)
    assert "evidence.consumed" not in events


# -- which ledger ---------------------------------------------------------------------


def test_user_config_chooses_postgres_and_env_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PI_OPERATOR_GUARD_LEDGER", raising=False)
    monkeypatch.delenv("PI_GUARD_LEDGER", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    assert ledger_url(home) is None
    (home / "operator-guard.toml").write_text('[ledger]\nurl = "postgresql://u@db/guard"\n')
    assert ledger_url(home) == "postgresql://u@db/guard"
    monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", "postgresql://v@other/guard")
    assert ledger_url(home) == "postgresql://v@other/guard"


@pytest.mark.parametrize(
    "text",
    [
        '[ledger]\nurl = "sqlite:///x"\n',
        "[ledger]\nurl = 5\n",
        '[ledger]\nurl = "postgresql://u@db/g"\nextra = 1\n',
        '[ledger\nurl = "postgresql://u@db/g"\n',
    ],
)
def test_a_bad_ledger_table_refuses_rather_than_falling_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.delenv("PI_OPERATOR_GUARD_LEDGER", raising=False)
    monkeypatch.delenv("PI_GUARD_LEDGER", raising=False)
    (tmp_path / "operator-guard.toml").write_text(text)
    with pytest.raises(LedgerError, match="consumption refused"):
        ledger_url(tmp_path)


def test_env_must_be_a_postgres_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", "mysql://root:hunter2@db/x")
    with pytest.raises(LedgerError) as caught:
        ledger_url(tmp_path)
    assert "hunter2" not in str(caught.value)


def test_a_project_file_cannot_choose_the_ledger(tmp_path: Path) -> None:
    from guard._policy.settings.config import parse_layer

    layer = parse_layer('[ledger]\nurl = "postgresql://evil@attacker/x"\n', "p.toml", "project")
    assert layer.ledger is None
    assert any(p.key == "ledger" and "user's file only" in p.message for p in layer.problems)


def test_insert_only_role_cannot_rewrite_the_ledger(pg_role: Any) -> None:
    """The deployment guide's grants: a guard's role consumes and prunes only through the
    functions; it can neither delete a consumed id nor lower the watermark."""
    url = pg_role("writer")
    guard = _open(url, "guard-host")
    try:
        exp = NOW + timedelta(minutes=5)
        assert guard.try_consume("g-1", exp, NOW) == "inserted"
        assert guard.prune(NOW - timedelta(days=1), timedelta(0)) == 0
        with psycopg.connect(url, autocommit=True) as db:
            for attack in (
                "DELETE FROM pi_guard.consumed",
                "UPDATE pi_guard.consumed SET expires_at_ms = 0",
                "UPDATE pi_guard.pruned SET through_ms = -1",
                "TRUNCATE pi_guard.consumed",
                "CREATE OR REPLACE FUNCTION pi_guard.consume(a text, b bigint, c bigint) "
                "RETURNS text LANGUAGE sql AS $$ SELECT 'inserted' $$",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    db.execute(attack.encode())
        assert guard.try_consume("g-1", exp, NOW) == "already-consumed"
    finally:
        guard.close()


def test_prune_cannot_run_far_ahead_of_the_server_clock(pg_url: str) -> None:
    ledger = _open(pg_url)
    try:
        real_now = datetime.now(UTC)
        soon = real_now + timedelta(minutes=30)
        assert ledger.try_consume("soon", soon, real_now) == "inserted"
        later = real_now + timedelta(days=2)
        assert ledger.try_consume("later", later, real_now) == "inserted"
        # A caller claiming it is next year forgets only what the server's clock allows.
        ledger.prune(real_now + timedelta(days=365), timedelta(0))
        assert ledger.try_consume("soon", soon, real_now) in ("already-consumed", "forgotten")
        assert ledger.try_consume("later", later, real_now) == "already-consumed"
        assert ledger.try_consume("fresh", later, real_now) == "inserted"
    finally:
        ledger.close()


def test_a_consume_racing_a_prune_never_revives_the_pruned_id(pg_url: str) -> None:
    """A prune in flight (watermark raised, row deleted, not yet committed) while another
    host consumes the very id: without the prune lock the insert would wait for the delete,
    find the key free and answer "inserted" (a revival). It must wait and refuse."""
    import threading

    ledger = _open(pg_url)
    real_now = datetime.now(UTC)
    soon = real_now + timedelta(seconds=1)
    assert ledger.try_consume("racing", soon, real_now) == "inserted"
    answers: list[str] = []
    with psycopg.connect(pg_url) as pruner:  # not autocommit: the prune stays open
        cutoff = int((real_now + timedelta(minutes=1)).timestamp() * 1000)
        assert pruner.execute("SELECT pi_guard.prune(%s)", (cutoff,)).fetchone() == (1,)
        other = _open(pg_url, "other-host")
        racer = threading.Thread(
            target=lambda: answers.append(other.try_consume("racing", soon, real_now))
        )
        racer.start()
        racer.join(timeout=1.0)
        assert racer.is_alive(), "the consume should wait for the prune in flight"
        pruner.commit()
    racer.join(timeout=30)
    other.close()
    ledger.close()
    assert answers == ["forgotten"]


def test_a_server_that_does_not_answer_in_time_fails_closed(pg_url: str) -> None:
    """A prune that never finishes (its lock held) must not hang a consume: the statement
    timeout (here 300 ms from the URL) turns it into an error, not a ``consumed``."""
    _open(pg_url).close()
    slow = f"{pg_url}?options=-c%20statement_timeout%3D300%20-c%20synchronous_commit%3Doff"
    ledger = _open(slow)
    try:
        with psycopg.connect(pg_url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(hashtext('pi_guard.pruned'), 1)")
            with pytest.raises(LedgerError, match="did not answer in time"):
                ledger.try_consume("stuck", NOW + timedelta(minutes=5), NOW)
            holder.rollback()
        assert ledger.try_consume("stuck", NOW + timedelta(minutes=5), NOW) == "inserted"
    finally:
        ledger.close()
    # The URL may tune timeouts, never durability.
    with connect(slow) as db:
        assert db.execute("SHOW synchronous_commit").fetchone() == ("on",)
        assert db.execute("SHOW statement_timeout").fetchone() == ("300ms",)
