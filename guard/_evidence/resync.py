"""Rebuild the consumption ledger from the audit log: a lost ledger never forgets.

Every consumption is written to the audit log as ``evidence.consumed``; those records
are the durable truth. Before any consume, :func:`sync_ledger` inserts every consumed
id the ledger does not hold yet:

- normally it reads only the records after the ledger's remembered position, after
  checking that the record ending there is still the one it read (same seq and hash);
- a ledger that is new, emptied, set aside as corrupt, a stale copy whose position no
  longer matches, or a log that was replaced: the whole log is read again, after
  :func:`audit.verify_log` found it intact under the keyring.

Ids already in the ledger are never removed by a sync. Anything that keeps the log
from being read or verified raises :class:`LedgerError`: consumption refuses rather
than trust a ledger that may have forgotten.

A shared PostgreSQL ledger (:mod:`guard._storage.pg_ledger`) is fed by many logs, one
per guard home on each host: this home's log is absorbed the same way (its ids added, never
removed), and the position is kept per source (host and home), not for the ledger as a
whole. What other hosts consumed is already in the shared ledger; what a verify-only
monitor consumed lives only there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogNotFoundError
from audit.lines import Chain, LogLineError, check_line, open_snapshot
from audit.verify import verify_log
from audit.wire import parse_iso
from guard._errors import LedgerError
from guard._evidence.recall import CONSUMED_EXPIRY_BOUND
from guard._storage import LogPosition, SyncedLedger

__all__ = ["sync_ledger"]


class _Reread(Exception):
    """The remembered position does not hold: read the whole log again."""


def sync_ledger(
    ledger: SyncedLedger,
    log_path: Path,
    public_keys: Mapping[str, Ed25519PublicKey] | None,
    *,
    require_log: bool = True,
) -> int:
    """Bring ``ledger`` up to the end of the audit log at ``log_path``; return ids read.

    ``public_keys`` verify the log before a full re-read (``None``: chain only, for a
    monitor that trusts its own home). ``require_log=False``: a missing log is nothing
    to sync (a monitor home with no audit log).
    """
    # One process at a time reads the log and moves the position: consumers racing on a
    # busy log otherwise kept moving it under each other and gave up with a state error.
    with ledger.sync_lock():
        # Still checked: a process that does not take the lock (an older guard) may move it.
        for _ in range(3):
            start = ledger.position()
            try:
                try:
                    found, end = _read_from(log_path, start, public_keys)
                except _Reread:
                    found, end = _read_from(log_path, None, public_keys)
            except LogNotFoundError:
                if require_log:
                    raise LedgerError(
                        log_path, "the audit log is missing: consumption refused"
                    ) from None
                return 0
            if end is None or ledger.absorb(found, end, start):
                return len(found)
    raise LedgerError(ledger.path, "the ledger's log position keeps moving; retry")


def _read_from(
    log_path: Path,
    start: LogPosition | None,
    public_keys: Mapping[str, Ed25519PublicKey] | None,
) -> tuple[list[tuple[str, datetime, datetime]], LogPosition | None]:
    if start is None and public_keys is not None:
        verdict = verify_log(log_path, public_keys)
        if verdict.decision != "intact":
            raise LedgerError(
                log_path,
                f"the audit log does not verify ({verdict.decision}: {verdict.detail}); "
                "the ledger cannot be rebuilt, consumption refused",
            )
    stream, size, _ = open_snapshot(log_path, with_head=False)
    with stream:
        chain = Chain()
        offset = 0
        if start is not None:
            if start.end_offset > size or start.end_offset <= 0:
                raise _Reread
            _check_anchor(stream, start)
            chain.log_id = start.log_id
            chain.next_seq = start.seq + 1
            chain.prev = start.record_hash
            offset = start.end_offset
        return _scan(log_path, stream, offset, size, chain, start)


def _check_anchor(stream: IO[bytes], start: LogPosition) -> None:
    """The record ending at ``start.end_offset`` must be the one the ledger last read."""
    fd = stream.fileno()
    # A small window first (a line is rarely longer), the full one only when it must.
    for limit in (64 << 10, 1 << 20):
        back = min(start.end_offset, limit)
        window = os.pread(fd, back, start.end_offset - back)
        if not window.endswith(b"\n"):
            raise _Reread
        cut = window.rfind(b"\n", 0, len(window) - 1)
        if cut >= 0 or back == start.end_offset:
            break
    else:
        raise _Reread  # a line longer than the window: not one this guard wrote
    try:
        rec = check_line(window[cut + 1 : -1])
    except LogLineError:
        raise _Reread from None
    if rec["seq"] != start.seq or rec["hash"] != start.record_hash:
        raise _Reread


def _scan(
    log_path: Path,
    stream: IO[bytes],
    offset: int,
    size: int,
    chain: Chain,
    start: LogPosition | None,
) -> tuple[list[tuple[str, datetime, datetime]], LogPosition | None]:
    stream.seek(offset)
    found: list[tuple[str, datetime, datetime]] = []
    last: dict[str, Any] | None = None
    end = offset
    while end < size:
        line = stream.readline(size - end)
        if not line.endswith(b"\n"):
            break  # a torn final line: the appender sets it aside; nothing consumed there
        try:
            rec = check_line(line[:-1])
            chain.accept(rec)
        except LogLineError as fault:
            raise LedgerError(
                log_path,
                f"the audit log breaks at byte {end} ({fault.kind}: {fault.detail}); "
                "consumption refused",
            ) from None
        end += len(line)
        last = rec
        if rec["event"] == "evidence.consumed":
            eid = rec["data"].get("evidenceId")
            if isinstance(eid, str):
                at = parse_iso(rec["ts"], "ts")
                found.append((eid, at + CONSUMED_EXPIRY_BOUND, at))
    if last is None:
        if start is None and size == 0:
            return found, None
        return found, start
    assert chain.log_id is not None
    return found, LogPosition(chain.log_id, int(last["seq"]), end, str(last["hash"]))
