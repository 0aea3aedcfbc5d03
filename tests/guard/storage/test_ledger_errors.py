"""The ledger's own failures: each names the ledger's file and says what is wrong, its log
position reads back exactly, a position moved by another process is left alone, and a corrupt
ledger is set aside under the next free name, never deleted.

Written for the mutants of ``guard/_storage/ledger.py`` that the behavioural tests left alive
(docs/testing.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from guard import LedgerError
from guard._storage import LogPosition
from guard._storage.ledger import _explain
from guard.evidence import SqliteLedger

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=60)
HERE = LogPosition("log_a", 3, 420, "h3")


def _drop(path: Path, table: str) -> None:
    other = sqlite3.connect(path, isolation_level=None)
    other.execute(f"DROP TABLE {table}")
    other.close()


CALLS: dict[str, tuple[str, Callable[[SqliteLedger], object]]] = {
    "try_consume": ("pruned", lambda ledger: ledger.try_consume("oce_a", LATER, NOW)),
    "prune": ("pruned", lambda ledger: ledger.prune(NOW, timedelta(seconds=5))),
    "position": ("synced", lambda ledger: ledger.position()),
    "absorb": ("consumed", lambda ledger: ledger.absorb([("oce_a", LATER, NOW)], HERE, None)),
    "count": ("consumed", lambda ledger: ledger.count()),
}


@pytest.mark.parametrize("method", sorted(CALLS))
def test_a_database_error_names_the_ledger_and_says_what(tmp_path: Path, method: str) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = SqliteLedger.open(path)
    assert ledger.path == path
    table, call = CALLS[method]
    _drop(path, table)
    with pytest.raises(LedgerError) as raised:
        call(ledger)
    ledger.close()
    assert raised.value.path == str(path)
    assert raised.value.problem == f"database error: no such table: {table}"


def test_a_locked_ledger_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    SqliteLedger.open(path).close()
    ledger = SqliteLedger.open(path, busy_timeout_ms=50)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError) as raised:
            ledger.try_consume("oce_a", LATER, NOW)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert raised.value.problem == "locked by another process past the busy timeout"
    assert raised.value.path == str(path)
    assert ledger.try_consume("oce_a", LATER, NOW) == "inserted"
    ledger.close()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("database is locked", "locked by another process past the busy timeout"),
        ("database table is locked", "locked by another process past the busy timeout"),
        ("database is busy", "locked by another process past the busy timeout"),
        ("file is not a database", "is not a valid SQLite ledger (corrupted?)"),
        ("database disk image is malformed", "is not a valid SQLite ledger (corrupted?)"),
        ("disk I/O error", "database error: disk I/O error"),
    ],
)
def test_sqlite_errors_are_explained(text: str, problem: str) -> None:
    assert _explain(sqlite3.OperationalError(text)) == problem


def test_a_corrupt_ledger_is_an_error_that_names_it(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    path.write_bytes(b"not sqlite" * 200)
    with pytest.raises(LedgerError) as raised:
        SqliteLedger.open(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == "is not a valid SQLite ledger (corrupted?)"
    assert path.read_bytes() == b"not sqlite" * 200


def test_the_position_reads_back_exactly(tmp_path: Path) -> None:
    ledger = SqliteLedger.open(tmp_path / "ledger.sqlite3")
    assert ledger.position() is None
    assert ledger.absorb([("oce_a", LATER, NOW)], HERE, None) is True
    assert ledger.position() == HERE
    there = LogPosition("log_a", 9, 1337, "h9")
    assert ledger.absorb([], there, HERE) is True
    assert ledger.position() == there
    ledger.close()


def test_a_position_moved_by_another_process_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    mine, theirs = SqliteLedger.open(path), SqliteLedger.open(path)
    assert theirs.absorb([], HERE, None) is True
    # This process read from the start (expected None) while the other moved the position.
    assert mine.absorb([("oce_b", LATER, NOW)], LogPosition("log_a", 1, 99, "h1"), None) is False
    assert mine.position() == HERE
    assert mine.try_consume("oce_b", LATER, NOW) == "already-consumed"  # the ids still landed
    mine.close()
    theirs.close()


def test_corrupt_ledgers_are_set_aside_under_the_next_free_name(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    for n in range(3):
        junk = f"corrupt ledger {n} ".encode() * 100
        path.write_bytes(junk)
        SqliteLedger.open(path, set_aside_corrupt=True).close()
        assert path.with_name(f"{path.name}.corrupt-{n}").read_bytes() == junk
        assert not path.with_name(f"{path.name}.corrupt-{n + 1}").exists()
    assert SqliteLedger.open(path).count() == 0


def test_a_corrupt_ledger_that_cannot_be_set_aside_is_an_error(tmp_path: Path) -> None:
    # A name one rename suffix short of NAME_MAX: the set-aside name is too long for any
    # user, root included (a read-only directory would not stop root).
    path = tmp_path / ("l" * 250)
    path.write_bytes(b"not sqlite" * 200)
    with pytest.raises(LedgerError) as raised:
        SqliteLedger.open(path, set_aside_corrupt=True)
    assert raised.value.path == str(path)
    assert raised.value.problem.startswith("corrupted and cannot be set aside: ")
    assert path.read_bytes() == b"not sqlite" * 200  # left where it was, untouched


def test_a_ledger_that_cannot_be_opened_names_it(tmp_path: Path) -> None:
    path = tmp_path / "missing-directory" / "ledger.sqlite3"
    with pytest.raises(LedgerError) as raised:
        SqliteLedger.open(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == "cannot open: unable to open database file"


def test_a_database_that_is_not_a_ledger_is_an_error_that_names_it(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE t (x)")
    other.execute("CREATE INDEX consumed ON t (x)")  # the ledger's table name, taken
    other.commit()
    other.close()
    with pytest.raises(LedgerError) as raised:
        SqliteLedger.open(path, set_aside_corrupt=True)
    assert raised.value.path == str(path)
    assert raised.value.problem == "database error: there is already an index named consumed"
    assert not path.with_name(f"{path.name}.corrupt-0").exists()  # not corrupt: not set aside


def test_a_ledger_that_fails_its_quick_check_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    SqliteLedger.open(path).close()
    data = bytearray(path.read_bytes())
    data[36:40] = (3).to_bytes(4, "big")  # the header's freelist count: quick_check disagrees
    path.write_bytes(bytes(data))
    with pytest.raises(LedgerError) as raised:
        SqliteLedger.open(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == "is not a valid SQLite ledger (corrupted?)"
    SqliteLedger.open(path, set_aside_corrupt=True).close()
    assert path.with_name(f"{path.name}.corrupt-0").read_bytes() == bytes(data)


def test_the_ledger_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    path.touch(mode=0o644)
    path.chmod(0o644)
    SqliteLedger.open(path).close()
    assert path.stat().st_mode & 0o777 == 0o600


def test_the_ledger_can_be_used_from_another_thread(tmp_path: Path) -> None:
    ledger = SqliteLedger.open(tmp_path / "ledger.sqlite3")
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(ledger.try_consume, "oce_a", LATER, NOW).result() == "inserted"
        assert pool.submit(ledger.count).result() == 1
    ledger.close()
