"""What a crash may leave after the signed head, and what it cannot.

The head is the commit point of an append (:mod:`audit._writing.log`): after the head's
record only one crashed append's leftovers are accepted, a torn final line or exactly one
complete record that chains from the head's record. :func:`find_head_record` finds the
head's record from the end of the log and judges what follows it; anything no single
crash leaves raises :class:`audit.LogIntegrityError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit._errors import LogIntegrityError, LogLineError
from audit._records.chain import Chain, check_body, lines_backward
from audit.tlog._merkle import Frontier
from audit.tlog._tree import HeadView

__all__ = ["Tail", "find_head_record", "is_genesis"]


@dataclass(frozen=True, slots=True)
class Tail:
    """Where the next record goes: the log's size, the chain position after it, and the
    Merkle frontier of every record before it (``frontier.size == next_seq``)."""

    size: int
    next_seq: int
    prev: str
    frontier: Frontier


def is_genesis(line: bytes) -> bool:
    """Whether ``line`` (LF included) is a valid record 0."""
    try:
        Chain().accept(check_body(line[:-1]))
    except LogLineError:
        return False
    return True


def find_head_record(
    path: Path, fd: int, size: int, head: HeadView
) -> tuple[int, int, str, str | None]:
    """Where the record the head names starts and ends, its hash, and what a crash
    left after it.

    The head's record must be the last complete line, or the one before a single
    complete record that chains from it; the last value is ``None`` (nothing
    after it), ``"torn-line"`` or ``"unsigned-tail"``. Anything else raises.
    """
    backward = lines_backward(fd, size)
    torn = False
    after: list[dict[str, Any] | LogLineError] = []
    for offset, line in backward:
        if not line.endswith(b"\n"):
            torn = True  # only the last piece can lack its line feed
            continue
        try:
            rec: dict[str, Any] | LogLineError = check_body(line[:-1])
        except LogLineError as fault:
            rec = fault
        if (
            isinstance(rec, dict)
            and rec["seq"] == head.seq
            and (head.hash is None or rec["hash"] == head.hash)
        ):
            _check_predecessor(path, backward, rec)
            reason = _crash_tail(path, head.seq, rec["hash"], after, torn)
            return offset, offset + len(line), rec["hash"], reason
        after.append(rec)
        if len(after) > 1:
            break
    raise _no_head_record(path, head, after)


def _crash_tail(
    path: Path, seq: int, last_hash: str, after: list[dict[str, Any] | LogLineError], torn: bool
) -> str | None:
    """Judge what follows the head's record: only one crashed append's leftovers pass."""
    if not after:
        return "torn-line" if torn else None
    (rec,) = after
    if isinstance(rec, LogLineError):
        raise LogIntegrityError(
            path, rec.kind, f"the line after the head's record is damaged: {rec.detail}"
        )
    if torn:
        raise LogIntegrityError(
            path,
            "records-after-head",
            "a record and a torn line follow the head's record: no single crash leaves both",
        )
    if rec["seq"] != seq + 1:
        raise LogIntegrityError(
            path,
            "seq-mismatch",
            f"the record after the head's record has seq {rec['seq']}, not {seq + 1}",
        )
    if rec["prev"] != last_hash:
        raise LogIntegrityError(
            path,
            "prev-mismatch",
            "the record after the head's record does not chain from it",
        )
    return "unsigned-tail"


def _no_head_record(
    path: Path, head: HeadView, after: list[dict[str, Any] | LogLineError]
) -> LogIntegrityError:
    records = [rec for rec in after if isinstance(rec, dict)]
    if len(records) < len(after) or any(rec["seq"] == head.seq for rec in records):
        return LogIntegrityError(
            path,
            "head-mismatch",
            f"the record the head names (seq {head.seq}) is missing or differs",
        )
    if len(records) == 2 and all(rec["seq"] > head.seq for rec in records):
        return LogIntegrityError(
            path,
            "records-after-head",
            f"more than one record follows the head's record (seq {head.seq}): "
            "an older head was put back, or records were added without the key",
        )
    if records and records[0]["seq"] < head.seq:
        return LogIntegrityError(
            path,
            "records-missing-at-end",
            f"the head names record {head.seq} but the log ends at record {records[0]['seq']}",
        )
    return LogIntegrityError(
        path,
        "head-mismatch",
        f"no record in the log matches the head (seq {head.seq})",
    )


def _check_predecessor(path: Path, backward: Iterator[tuple[int, bytes]], rec: Any) -> None:
    """The line before the head's record must be the record it chains from.

    Without this, a copy of the head's record appended after it would be taken for
    the head's record, and the appender would sign over a log with two records of
    one ``seq``.
    """
    if rec["seq"] == 0:
        return
    previous = next(backward, None)
    try:
        before = None if previous is None else check_body(previous[1][:-1])
    except LogLineError:
        before = None
    if before is None or before["seq"] != rec["seq"] - 1 or before["hash"] != rec["prev"]:
        raise LogIntegrityError(
            path,
            "head-mismatch",
            f"the record the head names (seq {rec['seq']}) does not chain from the one before",
        )
