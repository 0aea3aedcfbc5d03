"""The central audit store on PostgreSQL: every guard's log in one place for the auditor.

:func:`ship_log` copies a log's records (each line's exact bytes, without its line feed)
into ``pi_guard.audit_records`` keyed by (source, seq), and the head file, as opaque
bytes, into ``pi_guard.audit_heads`` keyed by (source, SHA-256 of the head) with the
number of records it was taken with. The *source* is the log id of record 0
(``log.created``): it stays the same when the signing key rotates, and a recovered log
(``audit recover``) is a new source, whose seq starts again at 0.

Idempotent and resumable: each run continues after the store's highest seq for the
source; rows go in per batch (one transaction each, in seq order, so what a killed run
left is a prefix) with ``ON CONFLICT DO NOTHING``, and every batch is read back and
compared byte for byte, as is the last row already stored. Two runs at once therefore
neither duplicate nor skip a record, and a row that differs from the log (the log or
the store was rewritten) is :class:`AuditStoreMismatch`.

:func:`load_source` writes one source's log and newest head back into files, so
``audit verify --from`` runs the very :func:`audit.verify_log` a file gets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import psycopg
from pydantic import BaseModel

from audit import LogFormatError
from audit.lines import Chain, LogLineError, check_line, head_path_for, open_snapshot
from audit.wire import WIRE_CONFIG
from guard._errors import AuditStoreError, AuditStoreMismatch, BadInputError
from guard._storage.pg_url import SHIP_BATCH, redact_url
from guard._storage.postgres import connect, ensure_schema, explain

__all__ = ["LoadedSource", "ShipResult", "load_source", "ship_log"]

_T = TypeVar("_T")


class ShipResult(BaseModel):
    """What one ``audit ship`` did (``--json``)."""

    model_config = WIRE_CONFIG

    source: str
    records: int  # records of the log in the store now (seq 0..records-1)
    shipped: int  # rows this run inserted (others were already there)
    head_sha256: str | None  # the head shipped with this snapshot; None: the log has none
    store: str  # the store's URL without its password


class LoadedSource(BaseModel):
    """What ``load_source`` wrote back from the store."""

    model_config = WIRE_CONFIG

    source: str
    records: int  # written to the log file (those the newest head was taken with)
    beyond_head: int  # stored records after those, not covered by any shipped head
    head_sha256: str | None


def _store(url: str, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
    try:
        with connect(url) as db:
            ensure_schema(db)
            return work(db)
    except psycopg.Error as exc:
        raise AuditStoreError(redact_url(url), f"PostgreSQL: {explain(exc, url)}") from None


def ship_log(log_path: Path, url: str, *, batch: int = SHIP_BATCH) -> ShipResult:
    """Copy the log's records and its head to the store at ``url`` (see the module doc)."""
    stream, size, head = open_snapshot(log_path, with_head=True)
    with stream:
        return _store(url, lambda db: _Shipper(log_path, db, batch).run(stream, size, head, url))


class _Shipper:
    def __init__(self, log_path: Path, db: psycopg.Connection[Any], batch: int) -> None:
        self.log_path = log_path
        self.db = db
        self.batch = max(1, batch)
        self.source = ""
        self.stored = -1  # the store's highest seq for the source when we started
        self.shipped = 0

    def run(self, stream: IO[bytes], size: int, head: bytes | None, url: str) -> ShipResult:
        chain = Chain()
        pending: list[tuple[int, bytes]] = []
        done = 0
        line_no = 0
        fault: LogFormatError | None = None
        while done < size:
            raw = stream.readline(size - done)
            if not raw.endswith(b"\n"):
                break  # a torn final line: not a record (yet)
            done += len(raw)
            line_no += 1
            body = raw[:-1]
            try:
                rec = check_line(body)
                chain.accept(rec)
            except LogLineError as bad:
                fault = LogFormatError(self.log_path, line_no, bad.kind, bad.detail)
                break
            if line_no == 1:
                self._start(str(chain.log_id))
            seq = int(rec["seq"])
            if seq < self.stored:
                continue
            if seq == self.stored:
                self._compare({seq: body})  # where the store ends, it must be our log
                continue
            pending.append((seq, body))
            if len(pending) >= self.batch:
                self._insert(pending)
                pending = []
        if pending:
            self._insert(pending)
        if not self.source:
            if fault is not None:
                raise fault
            raise BadInputError("audit log", "is empty: not an audit log", self.log_path)
        if self.stored >= chain.next_seq:
            raise AuditStoreMismatch(
                self.source,
                chain.next_seq,
                f"the store holds seq 0..{self.stored} but the log ends at seq "
                f"{chain.next_seq - 1}: the log was cut or replaced",
            )
        if fault is not None:
            raise fault  # the records before the break are shipped; the head is not
        head_hash = None if head is None else self._ship_head(head, chain.next_seq)
        return ShipResult(
            source=self.source,
            records=chain.next_seq,
            shipped=self.shipped,
            head_sha256=head_hash,
            store=redact_url(url),
        )

    def _start(self, source: str) -> None:
        self.source = source
        row = self.db.execute(
            "SELECT max(seq) FROM pi_guard.audit_records WHERE source = %s", (source,)
        ).fetchone()
        self.stored = -1 if row is None or row[0] is None else int(row[0])

    def _insert(self, rows: list[tuple[int, bytes]]) -> None:
        seqs = [seq for seq, _ in rows]
        with self.db.transaction():
            cursor = self.db.execute(
                "INSERT INTO pi_guard.audit_records (source, seq, line) "
                "SELECT %s, s, l FROM unnest(%s::bigint[], %s::bytea[]) AS t(s, l) "
                "ON CONFLICT (source, seq) DO NOTHING",
                (self.source, seqs, [line for _, line in rows]),
            )
            self.shipped += max(cursor.rowcount, 0)
        self._compare(dict(rows))

    def _compare(self, expected: dict[int, bytes]) -> None:
        found = {
            int(seq): bytes(line)
            for seq, line in self.db.execute(
                "SELECT seq, line FROM pi_guard.audit_records "
                "WHERE source = %s AND seq = ANY(%s::bigint[])",
                (self.source, list(expected)),
            )
        }
        for seq in sorted(expected):
            if found.get(seq) != expected[seq]:
                problem = "missing after insert" if seq not in found else "differs from the log"
                raise AuditStoreMismatch(self.source, seq, f"{problem}: refused")

    def _ship_head(self, head: bytes, records: int) -> str:
        digest = hashlib.sha256(head).hexdigest()
        self.db.execute(
            "INSERT INTO pi_guard.audit_heads (source, sha256, records, head) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (source, sha256) DO NOTHING",
            (self.source, digest, records, head),
        )
        row = self.db.execute(
            "SELECT records, head FROM pi_guard.audit_heads WHERE source = %s AND sha256 = %s",
            (self.source, digest),
        ).fetchone()
        if row is None or int(row[0]) != records or bytes(row[1]) != head:
            raise AuditStoreMismatch(self.source, None, "differs from the log's: refused")
        return digest


def load_source(url: str, source: str, directory: Path, name: str) -> LoadedSource:
    """Write ``source``'s records (up to its newest head) and that head into
    ``directory/name`` and its head file, exactly as ``audit ship`` copied them."""
    log_path = directory / name

    def load(db: psycopg.Connection[Any]) -> LoadedSource:
        heads = db.execute(
            "SELECT records, head, sha256 FROM pi_guard.audit_heads WHERE source = %s "
            "ORDER BY records DESC, sha256",
            (source,),
        ).fetchall()
        row = db.execute(
            "SELECT count(*) FROM pi_guard.audit_records WHERE source = %s", (source,)
        ).fetchone()
        stored = 0 if row is None else int(row[0])
        if not heads and stored == 0:
            raise BadInputError("--source", "no records or heads for it in the store", source)
        newest: tuple[int, bytes, str] | None = None
        if heads:
            newest = (int(heads[0][0]), bytes(heads[0][1]), str(heads[0][2]))
            rivals = [h for h in heads[1:] if int(h[0]) == newest[0]]
            if rivals:
                raise AuditStoreMismatch(
                    source, None, f"two different heads for the same {newest[0]} records"
                )
        covered = newest[0] if newest is not None else None
        written = _write_records(db, source, log_path, covered)
        if newest is not None:
            head_path_for(log_path).write_bytes(newest[1])
        return LoadedSource(
            source=source,
            records=written,
            beyond_head=max(stored - written, 0) if covered is not None else 0,
            head_sha256=None if newest is None else newest[2],
        )

    return _store(url, load)


def _write_records(
    db: psycopg.Connection[Any], source: str, log_path: Path, covered: int | None
) -> int:
    """Each stored line of ``source`` with seq below ``covered`` (all: ``None``), in order."""
    written = 0
    with db.transaction(), db.cursor(name="pi_guard_records") as cursor:
        cursor.itersize = 2000
        cursor.execute(
            "SELECT line FROM pi_guard.audit_records WHERE source = %s "
            "AND (%s::bigint IS NULL OR seq < %s::bigint) ORDER BY seq",
            (source, covered, covered),
        )
        with log_path.open("wb") as out:
            for (line,) in cursor:
                out.write(bytes(line) + b"\n")
                written += 1
    return written
