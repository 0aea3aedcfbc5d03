"""The consumption ledger: each evidence id can be consumed once, ever.

:class:`SqliteLedger` is the default. Single use rests on the PRIMARY KEY: of
many processes inserting the same id at once, exactly one insert changes a row.
WAL with ``synchronous=FULL`` makes the winner's commit durable before
:meth:`SqliteLedger.try_consume` returns, so a crash right after cannot revive
the id.
"""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, Protocol

from guard._errors import LedgerError

__all__ = ["ConsumptionLedger", "InsertOutcome", "SqliteLedger"]

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
"""


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class ConsumptionLedger(Protocol):
    """What a single-use store must do; later backends: Redis ``SET NX PX``, PostgreSQL."""

    def try_consume(
        self, evidence_id: str, expires_at: datetime, consumed_at: datetime
    ) -> InsertOutcome: ...

    def prune(self, now: datetime, skew: timedelta) -> int: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class SqliteLedger:
    """SQLite-backed ledger (WAL, ``synchronous=FULL``, busy timeout). Use :meth:`open`."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, path: Path, *, busy_timeout_ms: int = 5000) -> SqliteLedger:
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
        except sqlite3.DatabaseError as exc:
            db.close()
            raise LedgerError(path, _explain(exc)) from None
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

    def count(self) -> int:
        try:
            row = self._db.execute("SELECT count(*) FROM consumed").fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self.path, _explain(exc)) from None
        return int(row[0])

    def close(self) -> None:
        self._db.close()


def _explain(exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "locked by another process past the busy timeout"
    if "not a database" in text or "malformed" in text:
        return "is not a valid SQLite ledger (corrupted?)"
    return f"database error: {text}"
