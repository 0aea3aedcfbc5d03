"""The consumption ledger on PostgreSQL: one ledger for guards and monitors on many hosts.

Same protocol and semantics as :class:`guard._storage.ledger.SqliteLedger`:

- single use: ``pi_guard.consume`` inserts with ``ON CONFLICT DO NOTHING`` under the
  evidence id's PRIMARY KEY, so of any number of processes on any number of hosts
  exactly one gets ``"inserted"``;
- the prune watermark only grows, and an id expiring at or before it is ``"forgotten"``
  (refused): a clock stepping back never revives an id; a consume holds a shared
  advisory lock that a prune takes exclusively, so it never slips past a prune in flight;
- durable before ``"inserted"`` is returned: autocommit with ``synchronous_commit=on``.

Fail closed: a refused or lost connection, a timeout or a server restart is a
:class:`LedgerError` (never ``"inserted"``); the next call connects again. A consume
whose commit reply was lost may have consumed the id: the retry says
``"already-consumed"``, never ``"inserted"`` twice.

Resync (:mod:`guard._evidence.resync`) works as with SQLite: each guard home absorbs
its own audit log's ``evidence.consumed`` ids into the shared ledger, and its read
position is kept per *source* (host and home), since the log is one of many. A sync holds a
session advisory lock on its source (:meth:`PgLedger.sync_lock`), so the consumers of one
home take turns rather than race to move its position.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg

from guard._errors import LedgerError
from guard._storage.ledger import InsertOutcome, LogPosition
from guard._storage.pg_url import redact_url
from guard._storage.postgres import connect, ensure_schema, explain

__all__ = ["PgLedger"]

_T = TypeVar("_T")
_SYNC_LOCK = "pi_guard.synced"
_OUTCOMES: dict[str, InsertOutcome] = {
    "inserted": "inserted",
    "already-consumed": "already-consumed",
    "forgotten": "forgotten",
}


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class PgLedger:
    """PostgreSQL-backed ledger. Use :meth:`open`; ``path`` is the URL without password."""

    def __init__(self, url: str, source: str, connection: psycopg.Connection[Any] | None) -> None:
        self._url = url
        self.path = redact_url(url)
        self.source = source
        self._db = connection

    @classmethod
    def open(cls, url: str, *, source: str, lazy: bool = False) -> PgLedger:
        """Connect to the ledger at ``url`` (creating the schema if this role may).

        ``source`` names this guard home's audit log among the many that feed the ledger
        (its resync position is kept under that name). ``lazy``: connect on first use, so
        a guard whose ledger server is down still opens (and evaluates, asks and records);
        only what needs the ledger fails, closed.
        """
        ledger = cls(url, source, None)
        if not lazy:
            ledger._run(lambda db: None)
        return ledger

    def _connection(self) -> psycopg.Connection[Any]:
        if self._db is None or self._db.closed:
            db = connect(self._url)
            try:
                ensure_schema(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _run(self, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        try:
            return work(self._connection())
        except psycopg.Error as exc:
            self._drop()
            raise LedgerError(
                self.path, f"PostgreSQL ledger: {explain(exc, self._url)}; consumption refused"
            ) from None

    def _drop(self) -> None:
        """Forget a connection that failed; the next call connects again."""
        if self._db is not None:
            with contextlib.suppress(psycopg.Error):
                self._db.close()
            self._db = None

    def try_consume(
        self, evidence_id: str, expires_at: datetime, consumed_at: datetime
    ) -> InsertOutcome:
        """Atomically mark ``evidence_id`` consumed; durable when it returns ``"inserted"``."""
        args = (evidence_id, _ms(expires_at), _ms(consumed_at))

        def consume(db: psycopg.Connection[Any]) -> object:
            row = db.execute("SELECT pi_guard.consume(%s, %s, %s)", args).fetchone()
            return None if row is None else row[0]

        answer = self._run(consume)
        outcome = _OUTCOMES.get(answer) if isinstance(answer, str) else None
        if outcome is None:
            raise LedgerError(self.path, f"unexpected answer from pi_guard.consume: {answer!r}")
        return outcome

    def advance_sign_count(self, credential_id: str, sign_count: int) -> bool:
        """See :meth:`ConsumptionLedger.advance_sign_count` (``pi_guard.advance_sign_count``)."""

        def advance(db: psycopg.Connection[Any]) -> bool:
            row = db.execute(
                "SELECT pi_guard.advance_sign_count(%s, %s)", (credential_id, sign_count)
            ).fetchone()
            return bool(row is not None and row[0] is True)

        return self._run(advance)

    def prune(self, now: datetime, skew: timedelta) -> int:
        """Forget ids whose ``expiresAt + skew`` is past; the watermark only ever grows."""
        cutoff = _ms(now) - int(skew.total_seconds() * 1000)

        def prune(db: psycopg.Connection[Any]) -> int:
            row = db.execute("SELECT pi_guard.prune(%s)", (cutoff,)).fetchone()
            return 0 if row is None else int(row[0])

        return self._run(prune)

    def position(self) -> LogPosition | None:
        """How far into this source's audit log the ledger is synced; ``None``: never."""

        def read(db: psycopg.Connection[Any]) -> LogPosition | None:
            row = db.execute(
                "SELECT log_id, seq, end_offset, record_hash FROM pi_guard.synced "
                "WHERE source = %s",
                (self.source,),
            ).fetchone()
            if row is None:
                return None
            return LogPosition(str(row[0]), int(row[1]), int(row[2]), str(row[3]))

        return self._run(read)

    @contextlib.contextmanager
    def sync_lock(self) -> Iterator[None]:
        """Held while this source is synced from its audit log: one process at a time.

        A session advisory lock on the source (the server drops it with the connection);
        waiting for it is bounded by the statement timeout, then a :class:`LedgerError`.
        """
        key = (_SYNC_LOCK, self.source)
        self._run(lambda db: db.execute("SELECT pg_advisory_lock(hashtext(%s), hashtext(%s))", key))
        try:
            yield
        finally:
            db = self._db
            if db is not None and not db.closed:
                with contextlib.suppress(psycopg.Error):
                    db.execute("SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))", key)

    def absorb(
        self,
        consumed: Iterable[tuple[str, datetime, datetime]],
        position: LogPosition,
        expected: LogPosition | None,
    ) -> bool:
        """Insert ids read from this source's log and move its position; one transaction.

        ``False`` (ids inserted, position left alone) when another process moved the
        position since ``expected`` was read.
        """
        rows = [(eid, _ms(exp), _ms(at)) for eid, exp, at in consumed]

        def absorb(db: psycopg.Connection[Any]) -> bool:
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.source,))
                if rows:
                    with db.cursor() as cursor:
                        cursor.executemany(
                            "INSERT INTO pi_guard.consumed "
                            "(evidence_id, expires_at_ms, consumed_at_ms) VALUES (%s, %s, %s) "
                            "ON CONFLICT (evidence_id) DO NOTHING",
                            rows,
                        )
                row = db.execute(
                    "SELECT log_id, seq, end_offset, record_hash FROM pi_guard.synced "
                    "WHERE source = %s",
                    (self.source,),
                ).fetchone()
                now = None if row is None else LogPosition(row[0], row[1], row[2], row[3])
                if now != expected:
                    return False
                db.execute(
                    "INSERT INTO pi_guard.synced "
                    "(source, log_id, seq, end_offset, record_hash) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (source) DO UPDATE SET log_id = excluded.log_id, "
                    "seq = excluded.seq, end_offset = excluded.end_offset, "
                    "record_hash = excluded.record_hash",
                    (
                        self.source,
                        position.log_id,
                        position.seq,
                        position.end_offset,
                        position.record_hash,
                    ),
                )
            return True

        return self._run(absorb)

    def count(self) -> int:
        def count(db: psycopg.Connection[Any]) -> int:
            row = db.execute("SELECT count(*) FROM pi_guard.consumed").fetchone()
            return 0 if row is None else int(row[0])

        return self._run(count)

    def close(self) -> None:
        self._drop()
