"""``pi-guard audit show``: filter records and render them for people or machines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from audit._errors import UsageError
from audit._records.models import KNOWN_EVENTS, AuditRecord
from audit._reporting.table import render_table, safe_cell, short_hash

__all__ = ["filter_records", "grant_of", "render_records", "render_records_jsonl", "session_of"]


def _instant(value: datetime | str, what: str) -> datetime:
    """An aware UTC datetime from a datetime or an ISO 8601 string; naive means UTC.

    Lenient on purpose: this reads what a person typed, not the wire (see ``parse_iso``).
    """
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise UsageError(what, "not an ISO 8601 date or time", value) from None
    elif isinstance(value, datetime):
        moment = value
    else:
        raise UsageError(what, "must be a datetime or an ISO 8601 string", value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


_HASH_FIELDS = frozenset({"payloadHash", "oldKeyId", "newKeyId", "keyId"})
_SHOWN_ELSEWHERE = ("toolName", "toolCallId")


def filter_records(
    records: Iterable[AuditRecord],
    *,
    event: str | None = None,
    tool: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    evidence_id: str | None = None,
    session: str | None = None,
    grant: str | None = None,
) -> Iterator[AuditRecord]:
    """Records matching every given filter; ``since`` and ``until`` are inclusive.

    ``event`` is an exact event name, or a prefix ending in ``.`` (``"evidence."``);
    ``tool`` matches ``data.toolName``; ``evidence_id`` matches ``data.evidenceId``;
    ``session`` matches ``data.session.id`` (pi's session id); ``grant`` keeps the records
    that name a scoped grant (:func:`grant_of`): its ``grant.*`` records and the
    ``confirmation.recorded`` of every call it covered.
    Times are ISO 8601 (a naive time means UTC). Raises :class:`audit.UsageError` for a
    bad time or an event name (or prefix) no record of any log can have.
    """
    start = None if since is None else _instant(since, "since")
    stop = None if until is None else _instant(until, "until")
    if event is not None and not any(
        name == event or (event.endswith(".") and name.startswith(event)) for name in KNOWN_EVENTS
    ):
        raise UsageError(
            "event", "is no event of the log; valid: " + ", ".join(sorted(KNOWN_EVENTS)), event
        )
    for record in records:
        if event is not None and not (
            record.event == event or (event.endswith(".") and record.event.startswith(event))
        ):
            continue
        if tool is not None and record.data.get("toolName") != tool:
            continue
        if evidence_id is not None and record.data.get("evidenceId") != evidence_id:
            continue
        if session is not None and session_of(record) != session:
            continue
        if grant is not None and grant_of(record) != grant:
            continue
        if start is not None or stop is not None:
            moment = record.timestamp
            if start is not None and moment < start:
                continue
            if stop is not None and moment > stop:
                continue
        yield record


def session_of(record: AuditRecord) -> str | None:
    """The pi session id a record names (``data.session.id``), if it names one."""
    ref = record.data.get("session")
    return ref.get("id") if isinstance(ref, dict) and isinstance(ref.get("id"), str) else None


def grant_of(record: AuditRecord) -> str | None:
    """The scoped grant a record names: ``data.grantId`` (``grant.created``, ``grant.used``,
    ``grant.revoked``, ``grant.expired``) or ``data.coveredBy.grantId`` (the
    ``confirmation.recorded`` of a call the grant covered)."""
    found = record.data.get("grantId")
    if found is None and isinstance(covered := record.data.get("coveredBy"), dict):
        found = covered.get("grantId")
    return found if isinstance(found, str) else None


def _detail(data: dict[str, Any]) -> list[str]:
    parts = []
    for key in sorted(data):
        if key in _SHOWN_ELSEWHERE:
            continue
        value = data[key]
        if isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, list):
            text = ",".join(str(v) for v in value) or "-"
        elif isinstance(value, str) and key in _HASH_FIELDS:
            text = short_hash(value)
        elif key == "preview":
            text = repr(value)
        elif key == "session" and isinstance(value, dict):
            text = str(value.get("id"))
        elif key == "coveredBy" and isinstance(value, dict):
            text = f"{value.get('grantId')}#{value.get('use')}"
        elif key == "pattern" and isinstance(value, dict) and isinstance(value.get("globs"), list):
            text = ",".join(str(g) for g in value["globs"])
        else:
            text = str(value)
        parts.append(f"{key}={text}")
    return parts


def render_records(records: Iterable[AuditRecord], *, width: int | None = None) -> str:
    """A table for people: seq, time, event, tool, tool call id and the other fields.

    Hashes are shortened and control characters escaped; use
    :func:`render_records_jsonl` for the exact records. With ``width`` (``audit show``
    without ``--wide``) the time is ``MM-DD HH:MM:SS`` UTC and each record's detail goes on
    as many lines of at most ``width`` characters as it needs, under its column, nothing cut
    (a field breaks between fields, a field longer than a line inside it); without it, one
    line a record, however long.
    """
    shown = list(records)
    rows = [
        [
            str(r.seq),
            r.ts if width is None else _short_time(r.ts),
            r.event,
            str(r.data.get("toolName", "-")),
            str(r.data.get("toolCallId", "-")),
            "" if width is not None else " ".join(_detail(r.data)),
        ]
        for r in shown
    ]
    headers = ["SEQ", "TIME", "EVENT", "TOOL", "CALL", "DETAIL"]
    table = render_table(headers, rows)
    if width is None:
        return table
    lines = table.splitlines()
    column = lines[0].index("DETAIL")
    # Under the DETAIL column while that leaves a readable width, else under a short indent.
    indent = column if width - column >= _MIN_DETAIL else _INDENT
    out = [lines[0]]
    for line, record in zip(lines[1:], shown, strict=True):
        parts = [safe_cell(part) for part in _detail(record.data)]
        first, *rest = _pack(parts, max(_MIN_FIRST, width - column), width - indent)
        out.append((line.ljust(column) + first).rstrip())
        out += [" " * indent + more for more in rest]
    return "\n".join(out) + "\n"


_MIN_DETAIL = 40
_MIN_FIRST = 12
_INDENT = 8


def _pack(parts: list[str], first: int, room: int) -> list[str]:
    """``parts`` joined by spaces into lines, the first at most ``first`` characters long,
    the others ``room``; a part too long for a line of its own is split inside."""
    lines: list[str] = []
    line, limit = "", first
    for part in parts:
        piece = part
        while piece:
            joined = f"{line} {piece}" if line else piece
            if len(joined) <= limit:
                line, piece = joined, ""
            elif line:
                lines.append(line)
                line, limit = "", room
            else:
                lines.append(piece[:limit])
                piece, limit = piece[limit:], room
    return [*lines, line] if line or not lines else lines


def _short_time(ts: str) -> str:
    """``MM-DD HH:MM:SS`` of the record's UTC timestamp (``--wide`` and ``--json``: whole)."""
    return f"{ts[5:10]} {ts[11:19]}" if len(ts) >= 19 else ts


def render_records_jsonl(records: Iterable[AuditRecord]) -> str:
    """One canonical JSON record per line, exactly as in the log."""
    return "".join(r.to_line().decode("utf-8") for r in records)
