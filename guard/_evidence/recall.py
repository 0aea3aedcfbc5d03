"""Recall an evidence id from the audit log itself, whatever the ledger says.

:func:`recall_consumed` looks for the envelope's id among the log's recent
``evidence.consumed`` records, read backwards from the end until a record older than the
envelope's ``createdAtIso`` minus a margin: a ledger edited in place (rows gone, sync
position forged) still cannot forget a consumption.

Reading that window line by line on every consume cost time in proportion to the log's
last minutes (thousands of lines on a busy guard). So each process keeps, per log file, an
index of the complete lines it has already checked (:class:`_Index`: each line's ``ts``
and the ids consumed), built from the log and never from the ledger. A call re-checks that
the last indexed line is still in place byte for byte, checks and indexes only the lines
appended since, and answers from the index exactly as the backward scan would: it stops at
the newest record older than the window, it finds the newest ``evidence.consumed`` of the
id before that. What the index does not reach (lines before it) is scanned as before.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from audit import LogNotFoundError
from audit.lines import LogLineError, check_line, lines_backward, open_snapshot, pread_exact
from audit.wire import parse_iso, utc_now
from guard._errors import LedgerError, MalformedEvidence
from guard._evidence.envelope import ParsedEnvelope, parse_envelope
from guard._evidence.models import MAX_TTL_SECONDS
from guard._storage import SyncedLedger

__all__ = ["CONSUMED_EXPIRY_BOUND", "RECALL_MARGIN", "recall_consumed"]

# An id is consumed before it expires, and it expires at most MAX_TTL after it was
# created, which is at most the skew before it was consumed. So ``ts + bound`` of the
# ``evidence.consumed`` record is never earlier than the real expiry: keeping the id
# that long is safe (the time check rejects it after its real expiry anyway).
CONSUMED_EXPIRY_BOUND = timedelta(seconds=MAX_TTL_SECONDS + 60)
# How far before an envelope's createdAt :func:`recall_consumed` still looks: the skew a
# consume may accept, plus room for a wall clock that stepped back a little.
RECALL_MARGIN = timedelta(seconds=60)

_MAX_LINES = 1 << 15  # lines one index keeps (the oldest half goes when it is full)
_MAX_CATCH_UP = 8 << 20  # bytes read forward at once; past that, start a new index
_MAX_LOGS = 8  # logs with an index in one process
# How far back a new index reaches: past the oldest window an unexpired envelope can ask
# for (its createdAt at most the maximum TTL ago, less the margin), with a minute to spare.
_HORIZON = timedelta(seconds=MAX_TTL_SECONDS) + RECALL_MARGIN + timedelta(seconds=60)


class _Index:
    """The complete lines of one log from byte ``start`` to byte ``end``, all checked."""

    def __init__(self, start: int, end: int, last: bytes) -> None:
        self.start = start
        self.end = end
        self.last = last  # the line ending at ``end`` (with its LF): the anchor
        self.offsets: list[int] = []
        self.times: list[datetime] = []
        self.minima: list[int] = []  # suffix minima of ``times``: indices, times increasing
        self.consumed: dict[str, int] = {}  # id -> index of its newest evidence.consumed

    def holds(self, fd: int, size: int) -> bool:
        """The indexed lines are still where they were (the anchor line byte for byte)."""
        if size < self.end:
            return False
        if not self.last:
            return self.end == 0  # nothing indexed: only an empty log's start is known
        return pread_exact(fd, len(self.last), self.end - len(self.last)) == self.last

    def extend(self, fd: int, size: int, log_path: Path) -> None:
        """Check and index the complete lines between ``end`` and ``size``."""
        base = self.end
        data = pread_exact(fd, size - base, base)
        pos = 0
        while (cut := data.find(b"\n", pos)) >= 0:  # a torn final line is left out
            line = data[pos : cut + 1]
            try:
                rec = check_line(line[:-1])
            except LogLineError as fault:
                raise _broken(log_path, base + pos, fault) from None
            self.add(base + pos, rec)
            pos = cut + 1
            self.end, self.last = base + pos, line
        if len(self.times) > _MAX_LINES:
            self._drop_oldest(len(self.times) // 2)

    def add(self, offset: int, rec: Mapping[str, Any]) -> None:
        """Index the checked record ``rec`` that starts at byte ``offset``."""
        index = len(self.times)
        self._push(offset, parse_iso(rec["ts"], "ts"))
        if rec["event"] == "evidence.consumed":
            eid = rec["data"].get("evidenceId")
            if isinstance(eid, str):
                self.consumed[eid] = index

    def _push(self, offset: int, at: datetime) -> None:
        """Append one line's offset and time, keeping the suffix minima."""
        self.offsets.append(offset)
        self.times.append(at)
        while self.minima and self.times[self.minima[-1]] >= at:
            self.minima.pop()
        self.minima.append(len(self.times) - 1)

    def _drop_oldest(self, count: int) -> None:
        offsets, times = self.offsets[count:], self.times[count:]
        consumed = {eid: i - count for eid, i in self.consumed.items() if i >= count}
        self.start = offsets[0]
        self.offsets, self.times, self.minima = [], [], []
        for offset, at in zip(offsets, times, strict=True):
            self._push(offset, at)
        self.consumed = consumed

    def lookup(self, eid: str, since: datetime) -> datetime | bool | None:
        """What the backward scan decides inside the index: the ``ts`` of the id's newest
        ``evidence.consumed`` (found), ``False`` (a line older than ``since`` comes first),
        ``None`` (undecided: scan the lines before ``start``)."""
        hit = self.consumed.get(eid)
        if hit is not None:
            # Found unless a line from it to the end is older than the window.
            oldest = self.times[self.minima[bisect_left(self.minima, hit)]]
            return self.times[hit] if oldest >= since else False
        if self.minima and self.times[self.minima[0]] < since:
            return False
        return None


# Per log file (device, inode); one lock for all: each use is a few lines' work, and the
# scan before an index's start runs outside it.
_indexes: dict[tuple[int, int], _Index] = {}
_lock = threading.Lock()


def recall_consumed(
    ledger: SyncedLedger,
    log_path: Path,
    raw: Mapping[str, Any] | str | bytes | None,
    *,
    margin: timedelta = RECALL_MARGIN,
    require_log: bool = True,
    parsed: ParsedEnvelope | None = None,
) -> bool:
    """Look for the envelope's id among the log's recent ``evidence.consumed`` records.

    Independent of the ledger's own state (a forged sync position, deleted rows): the
    log is read backwards only as far as the evidence's ``createdAtIso`` minus ``margin``
    (a consumption is never earlier than that), at most the maximum TTL of records. A
    hit is put into the ledger, so the consume that follows is a ``replay``. Returns
    whether it was found. An envelope that does not parse is left to the checks.
    ``require_log=False``: a missing log holds nothing to recall (a monitor home).
    A line that does not check raises :class:`LedgerError`. ``parsed``: ``raw`` already
    parsed.
    """
    if raw is None:
        return False
    try:
        envelope, _ = parse_envelope(raw) if parsed is None else parsed.get()
    except MalformedEvidence:
        return False
    eid = envelope.details.evidence_id
    since = parse_iso(envelope.details.created_at_iso, "createdAtIso") - margin
    try:
        stream, size, _ = open_snapshot(log_path, with_head=False)
    except LogNotFoundError:
        if not require_log:
            return False
        raise LedgerError(log_path, "the audit log is missing: consumption refused") from None
    with stream:
        fd = stream.fileno()
        with _lock:
            index = _index_for(fd, size)
            index.extend(fd, size, log_path)
            found = index.lookup(eid, since)
            before = index.start
        if found is None:
            found = _scan_backward(fd, before, eid, since, log_path)
    if found is False:
        return False
    assert isinstance(found, datetime)
    ledger.try_consume(eid, found + CONSUMED_EXPIRY_BOUND, found)
    return True


def _index_for(fd: int, size: int) -> _Index:
    """This log's index if it still holds, else a new one (:func:`_seed`)."""
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino)
    index = _indexes.get(key)
    if index is not None and index.holds(fd, size) and size - index.end <= _MAX_CATCH_UP:
        return index
    _indexes.pop(key, None)
    index = _seed(fd, size)
    while len(_indexes) >= _MAX_LOGS:
        del _indexes[next(iter(_indexes))]
    _indexes[key] = index
    return index


def _seed(fd: int, size: int) -> _Index:
    """An index of the log's last lines, back to one older than any window a current
    envelope can ask for (or the log's start, or :data:`_MAX_LINES`). A line that does not
    check ends it there: a scan that reaches that line raises, as before."""
    horizon = utc_now() - _HORIZON
    collected: list[tuple[int, dict[str, Any]]] = []
    end, last = size, b""
    for offset, line in lines_backward(fd, size):
        if not line.endswith(b"\n"):
            end = offset  # a torn final line: the index ends before it
            continue
        try:
            rec = check_line(line[:-1])
        except LogLineError:
            break
        collected.append((offset, rec))
        last = last or line
        if parse_iso(rec["ts"], "ts") < horizon or len(collected) >= _MAX_LINES:
            break
    index = _Index(collected[-1][0] if collected else end, end, last)
    for offset, rec in reversed(collected):
        index.add(offset, rec)
    return index


def _scan_backward(
    fd: int, size: int, eid: str, since: datetime, log_path: Path
) -> datetime | bool:
    """The backward scan over the first ``size`` bytes: the ``ts`` of the id's newest
    ``evidence.consumed`` newer than ``since``, or ``False``."""
    for offset, line in lines_backward(fd, size):
        if not line.endswith(b"\n"):
            continue  # a torn final line
        try:
            rec = check_line(line[:-1])
        except LogLineError as fault:
            raise _broken(log_path, offset, fault) from None
        at = parse_iso(rec["ts"], "ts")
        if at < since:
            return False
        if rec["event"] == "evidence.consumed" and rec["data"].get("evidenceId") == eid:
            return at
    return False


def _broken(log_path: Path, offset: int, fault: LogLineError) -> LedgerError:
    return LedgerError(
        log_path, f"the audit log breaks at byte {offset} ({fault.kind}); consumption refused"
    )
