"""What a recovery set aside still counts in ``audit report``.

A ``log.recovered`` record moves bytes out of the log: the tail one crash left, or (``pi-guard
audit recover``) the whole damaged log. Without this module the report would read only the
new log, so an unconfirmed execution in the moved bytes would vanish from it, and damaging a
log on purpose (an older head put back), then recovering it, would turn ``gaps`` into
``no-gaps``. :func:`set_aside_rows` reads each set-aside file named by a ``log.recovered``
record (and those its own ``log.recovered`` records name), classifies its executions as
the report does and returns its gaps as rows whose ``source`` names the file.

The set-aside bytes are damaged by definition, so they are read line by line: a line whose
hash or chain is broken but which is still a record's JSON counts (it may be the very
execution); a line that is not counts as ``unreadable``. A set-aside file that is missing,
or whose size or SHA-256 is not the one recorded, is an integrity failure: the report
cannot say what it held.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from audit._errors import LogFormatError, LogLineError
from audit._records.chain import check_body
from audit._records.log_events import LogRecoveredData
from audit._records.models import EVENT_MODELS, AuditRecord
from audit._reporting.report import build_report
from audit._reporting.rows import ExternalSource, ReportRow

__all__ = ["SET_ASIDE_KIND", "SetAside", "set_aside_rows"]

SET_ASIDE_KIND = "set-aside-log"
"""``ExternalSource.kind`` of a file a ``log.recovered`` record moved out of the log."""

_MAX_DEPTH = 32  # a recovered log whose set-aside log was recovered, and so on


@dataclass(slots=True)
class SetAside:
    """Gap rows from set-aside files, one source per file, and every record read from them."""

    rows: list[ReportRow] = field(default_factory=list)
    sources: list[ExternalSource] = field(default_factory=list)
    records: list[AuditRecord] = field(default_factory=list)


def set_aside_rows(log_path: Path, records: Sequence[AuditRecord]) -> SetAside:
    """The gaps in every file a ``log.recovered`` record of ``records`` set aside.

    ``records`` are the log's at ``log_path`` (set-aside files are looked for next to it).
    Raises :class:`audit.LogFormatError` (kind ``log-replaced``) if a set-aside file is
    missing or is not the bytes the record describes.
    """
    out = SetAside()
    _collect(log_path, list(records), out, depth=0, seen=set())
    return out


def _collect(
    log_path: Path, records: list[AuditRecord], out: SetAside, *, depth: int, seen: set[str]
) -> None:
    for index, record in enumerate(records):
        if record.event != "log.recovered":
            continue
        try:
            moved = LogRecoveredData.model_validate(record.data)
        except ValidationError:
            continue  # verify and build_report judge the record itself
        target = log_path.with_name(moved.quarantined_to)
        if target.name in seen or depth >= _MAX_DEPTH:
            continue
        seen.add(target.name)
        data = _read_checked(log_path, record, moved, target)
        whole = moved.reason == "operator-recovery"
        found, unreadable = _parse(data)
        # A tail continues the log before it (its confirmations count); a whole log stands alone.
        before = [] if whole else records[:index]
        first = 0 if whole else record.seq
        report = build_report([*before, *found])
        executions = [r for r in report.rows if r.seq is not None and r.seq >= first]
        gaps = [r for r in executions if r.classification == "audit-gap"]
        out.rows.extend(
            r.model_copy(update={"seq": None, "source": f"{target.name} seq {r.seq}"}) for r in gaps
        )
        out.sources.append(
            ExternalSource(
                kind=SET_ASIDE_KIND,
                location=target.name,
                files=1,
                executions=len(executions),
                gaps=len(gaps),
                unreadable=unreadable,
            )
        )
        out.records.extend(found)
        if whole:
            _collect(target, found, out, depth=depth + 1, seen=seen)


def _read_checked(
    log_path: Path, record: AuditRecord, moved: LogRecoveredData, target: Path
) -> bytes:
    def refuse(problem: str) -> LogFormatError:
        return LogFormatError(
            log_path,
            record.seq + 1,
            "log-replaced",
            f"the bytes record {record.seq} set aside as {target.name} {problem}",
        )

    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise refuse("are gone: the report cannot say what they held") from None
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror}") from None
    if len(data) != moved.bytes:
        raise refuse(f"are {len(data)} bytes, not the {moved.bytes} recorded")
    if moved.sha256 is not None and "sha256:" + hashlib.sha256(data).hexdigest() != moved.sha256:
        raise refuse("no longer have the SHA-256 recorded")
    return data


def _parse(data: bytes) -> tuple[list[AuditRecord], int]:
    found: list[AuditRecord] = []
    unreadable = 0
    for line in data.splitlines():
        try:
            body = check_body(line)
        except LogLineError:
            try:
                body = json.loads(line)
            except (ValueError, RecursionError):
                unreadable += 1
                continue
        try:
            record = AuditRecord.model_validate(body)
            if record.event in EVENT_MODELS:
                record.typed_data()
        except ValidationError:
            unreadable += 1
            continue
        found.append(record)
    return found, unreadable
