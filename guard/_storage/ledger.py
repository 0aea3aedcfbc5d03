"""The consumption ledger: each evidence id can be consumed once, ever.

The ledger is a fast index; the audit log's ``evidence.consumed`` records are the
durable truth. The ledger remembers how far into the log it is synced (``synced``:
log id, seq, byte offset and hash of the last record read), so
:func:`guard._evidence.resync.sync_ledger` reads only new records, and a missing,
emptied, corrupted or stale-copy ledger is rebuilt from the log before any consume.

:class:`SqliteLedger` is the default. Single use rests on the PRIMARY KEY: of
many processes inserting the same id at once, exactly one insert changes a row.
WAL with ``synchronous=FULL`` makes the winner's commit durable before
:meth:`SqliteLedger.try_consume` returns, so a crash right after cannot revive
the id.

Syncing from the log is serialised per ledger (:meth:`SqliteLedger.sync_lock`, an
``flock`` on a file beside it): many consumers at once each wait their turn and read only
what the one before them had not, instead of racing to move the same position.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, Protocol

from guard._errors import LedgerError

__all__ = ["ConsumptionLedger", "InsertOutcome", "LogPosition", "SqliteLedger", "SyncedLedger"]

InsertOutcome = Literal["inserted", "already-consumed", "forgotten"]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS consumed (
    evidence_id    TEXT PRIMARY KEY,
    expires_at_ms  INTEGER NOT NULL,
    consumed_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruned (
    one            INTEGER PRIMARY KEY CHECK (one = 1),
    through_ms     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sign_counts (
    credential_id  TEXT PRIMARY KEY,
    sign_count     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS synced (
    one            INTEGER PRIMARY KEY CHECK (one = 1),
    log_id         TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    end_offset     INTEGER NOT NULL,
    record_hash    TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class LogPosition:
    """The last audit record the ledger has absorbed: it ends at byte ``end_offset``."""

    log_id: str
    seq: int
    end_offset: int
    record_hash: str


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class ConsumptionLedger(Protocol):
    """What a single-use store must do: :class:`SqliteLedger`, ``PgLedger`` (PostgreSQL)."""

    def try_consume(
        self, evidence_id: str, expires_at: datetime, consumed_at: datetime
    ) -> InsertOutcome: ...

    def prune(self, now: datetime, skew: timedelta) -> int: ...

    def advance_sign_count(self, credential_id: str, sign_count: int) -> bool:
        """Remember ``sign_count`` for the operator credential ``credential_id`` if it is
        above the highest seen (or both are 0: an authenticator without a counter); ``False``
        when it is not, and nothing changes."""
        ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class SyncedLedger(ConsumptionLedger, Protocol):
    """A ledger that :mod:`guard._evidence.resync` keeps in step with an audit log.

    ``path`` names it in errors (a file, or a URL without its password).
    """

    @property
    def path(self) -> object: ...

    def position(self) -> LogPosition | None: ...

    def sync_lock(self) -> contextlib.AbstractContextManager[None]: ...

    def absorb(
        self,
        consumed: Iterable[tuple[str, datetime, datetime]],
        position: LogPosition,
        expected: LogPosition | None,
    ) -> bool: ...


class SqliteLedger:
    """SQLite-backed ledger (WAL, ``synchronous=FULL``, busy timeout). Use :meth:`open`."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(
        cls, path: Path, *, busy_timeout_ms: int = 5000, set_aside_corrupt: bool = False
    ) -> SqliteLedger:
        """Open (creating) the ledger at ``path``.

        ``set_aside_corrupt``: a file that is not a sound SQLite ledger (truncated,
        overwritten) is renamed to ``<name>.corrupt-<n>`` and a fresh, empty ledger is
        created in its place; only for callers that rebuild it from the audit log before
        consuming. Otherwise it is a :class:`LedgerError`.
        """
        try:
            return cls._open(path, busy_timeout_ms)
        except _Corrupt as exc:
            if not set_aside_corrupt:
                raise LedgerError(path, exc.detail) from None
        _set_aside(path)
        try:
            return cls._open(path, busy_timeout_ms)
        except _Corrupt as exc:
            raise LedgerError(path, exc.detail) from None

    @classmethod
    def _open(cls, path: Path, busy_timeout_ms: int) -> SqliteLedger:
        try:
            db = sqlite3.connect(
                path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise LedgerError(path, f"cannot open: {exc}") from None
        try:
            db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            check = db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            db.close()
            detail = _explain(exc)
            if detail == _CORRUPT:
                raise _Corrupt(detail) from None
            raise LedgerError(path, detail) from None
        if check != [("ok",)]:
            db.close()
            raise _Corrupt(_CORRUPT)
        with contextlib.suppress(OSError):  # best effort: the home is 0700 anyway
            path.chmod(0o600)
        return cls(path, db)

    def try_consume(
        self, evidence_id: str, expires_at: datetime, consumed_at: datetime
    ) -> InsertOutcome:
        """Atomically mark ``evidence_id`` consumed. Durable when it returns ``"inserted"``.

        ``"forgotten"``: the id expires at or before a point the ledger has already
        pruned through, so the ledger can no longer tell whether it was consumed. That
        happens only after the wall clock stepped back past a prune; it is refused, so a
        clock step can never revive a consumed id.
        """
        try:
            cursor = self._db.execute(
                "INSERT INTO consumed (evidence_id, expires_at_ms, consumed_at_ms) "
                "SELECT ?, ?, ? WHERE ? > (SELECT coalesce(max(through_ms), -1) FROM pruned) "
                "ON CONFLICT (evidence_id) DO NOTHING",
                (evidence_id, _ms(expires_at), _ms(consumed_at), _ms(expires_at)),
            )
            if cursor.rowcount == 1:
                return "inserted"
            row = self._db.execute(
                "SELECT 1 FROM consumed WHERE evidence_id = ?", (evidence_id,)
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        return "already-consumed" if row is not None else "forgotten"

    def advance_sign_count(self, credential_id: str, sign_count: int) -> bool:
        """See :meth:`ConsumptionLedger.advance_sign_count`; one statement, so atomic."""
        try:
            cursor = self._db.execute(
                "INSERT INTO sign_counts (credential_id, sign_count) VALUES (?, ?) "
                "ON CONFLICT (credential_id) DO UPDATE SET sign_count = excluded.sign_count "
                "WHERE excluded.sign_count > sign_counts.sign_count "
                "OR (excluded.sign_count = 0 AND sign_counts.sign_count = 0)",
                (credential_id, sign_count),
            )
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        return cursor.rowcount == 1

    def prune(self, now: datetime, skew: timedelta) -> int:
        """Forget ids whose ``expiresAt + skew`` is past; the time check rejects those first.

        The cut-off is remembered (it only ever grows), so an id that expires at or
        before it is refused as ``"forgotten"`` even if the clock later steps back.
        """
        cutoff = _ms(now) - int(skew.total_seconds() * 1000)
        try:
            with self._db:  # one transaction: the watermark and the delete land together
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "INSERT INTO pruned (one, through_ms) VALUES (1, ?) ON CONFLICT (one) "
                    "DO UPDATE SET through_ms = max(through_ms, excluded.through_ms)",
                    (cutoff,),
                )
                cursor = self._db.execute(
                    "DELETE FROM consumed WHERE expires_at_ms <= "
                    "(SELECT through_ms FROM pruned WHERE one = 1)"
                )
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        return cursor.rowcount

    @contextlib.contextmanager
    def sync_lock(self) -> Iterator[None]:
        """Held while the ledger is synced from the audit log: one process at a time.

        An exclusive ``flock`` on ``<ledger>.sync-lock`` (the ledger file itself may be set
        aside and replaced; the lock file never is). Waits as the audit log's appenders do:
        a holder only reads the log and writes one transaction.
        """
        lock = self.path.with_name(self.path.name + ".sync-lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise LedgerError(lock, f"cannot open the sync lock: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def position(self) -> LogPosition | None:
        """How far into the audit log this ledger is synced; ``None``: never (rebuild)."""
        try:
            row = self._db.execute(
                "SELECT log_id, seq, end_offset, record_hash FROM synced WHERE one = 1"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        if row is None:
            return None
        return LogPosition(str(row[0]), int(row[1]), int(row[2]), str(row[3]))

    def absorb(
        self,
        consumed: Iterable[tuple[str, datetime, datetime]],
        position: LogPosition,
        expected: LogPosition | None,
    ) -> bool:
        """Insert ``(evidence_id, expires_at, consumed_at)`` read from the log, move the
        position to ``position``; one transaction. Ids already present are kept as they are.

        ``expected`` is the position the caller started reading from: when another process
        moved it meanwhile, the ids are still inserted (harmless) but the position is left
        alone and ``False`` is returned.

        Committed without its own ``fsync`` (``synchronous=NORMAL`` for this transaction):
        everything it writes is read again from the audit log if a crash loses it, and the
        next ``try_consume`` (``FULL``) syncs the write-ahead log it sits in anyway. A lost
        absorb loses the transactions after it, never a part of one (WAL order).
        """
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                return self._absorb(consumed, position, expected)
            finally:
                self._db.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None

    def _absorb(
        self,
        consumed: Iterable[tuple[str, datetime, datetime]],
        position: LogPosition,
        expected: LogPosition | None,
    ) -> bool:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO consumed (evidence_id, expires_at_ms, consumed_at_ms) "
                "VALUES (?, ?, ?) ON CONFLICT (evidence_id) DO NOTHING",
                ((eid, _ms(exp), _ms(at)) for eid, exp, at in consumed),
            )
            if self.position() != expected:
                return False
            self._db.execute(
                "INSERT INTO synced (one, log_id, seq, end_offset, record_hash) "
                "VALUES (1, ?, ?, ?, ?) ON CONFLICT (one) DO UPDATE SET "
                "log_id = excluded.log_id, seq = excluded.seq, "
                "end_offset = excluded.end_offset, record_hash = excluded.record_hash",
                (position.log_id, position.seq, position.end_offset, position.record_hash),
            )
        return True

    def count(self) -> int:
        try:
            row = self._db.execute("SELECT count(*) FROM consumed").fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        return int(row[0])

    def close(self) -> None:
        self._db.close()


_CORRUPT = "is not a valid SQLite ledger (corrupted?)"


class _Corrupt(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _set_aside(path: Path) -> None:
    """Rename a corrupt ledger (and its WAL files) out of the way, never delete it."""
    try:
        n = 0
        while path.with_name(f"{path.name}.corrupt-{n}").exists():
            n += 1
        target = path.with_name(f"{path.name}.corrupt-{n}")
        os.replace(path, target)
    except OSError as exc:
        raise LedgerError(path, f"corrupted and cannot be set aside: {exc.strerror}") from None
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.replace(path.with_name(path.name + suffix), target.with_name(target.name + suffix))


def _explain(exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "locked by another process past the busy timeout"
    if "not a database" in text or "malformed" in text:
        return _CORRUPT
    return f"database error: {text}"
