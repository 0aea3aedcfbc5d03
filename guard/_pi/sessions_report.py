"""``audit report --sessions DIR``: tool calls pi ran with no guard record at all.

pi writes each session as a JSONL file (``<agentDir>/sessions/--<cwd>--/<time>_<id>.jsonl``):
a header ``{"type": "session", "cwd": …}``, then entries; a ``message`` entry whose
``message.role`` is ``assistant`` holds the model's ``{"type": "toolCall", "id", "name",
"arguments"}`` content items, and one whose role is ``toolResult`` (``toolCallId``,
``isError``) says the call finished. A call with a result is an *execution* (a call the
guard blocked has a result too, and a guard record).

Every execution is classified with the policy the guard uses (:class:`PolicyCache` of the
home, at the session's ``cwd``). A destructive or protected execution counts as guarded when
the audit log holds any record for it: one with its ``toolCallId`` (and the same scope, when
the record names one), else one without a ``toolCallId`` but with its fingerprint (each
such record matches once). Every other one becomes an ``audit-gap`` row with reason
``guard-absent``: it ran while no guard was there (not installed, not loaded — e.g. an
untrusted project — or writing to another home). Calls without a result are not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit import JsonInputError
from audit.verify import ExternalSource, ReportRow
from audit.wire import AuditRecord, load_json
from guard._errors import BadInputError
from guard._evidence import Fingerprint
from guard._facade import classify_call
from guard._lines import iter_frames
from guard._policy import PolicyCache

__all__ = ["SESSIONS_KIND", "guard_absent_rows"]

SESSIONS_KIND = "pi-sessions"
_MAX_ENTRY_BYTES = 64 << 20
_MARKERS = (b"toolCall", b'"session"')

_Key = tuple[str, str, str | None, str | None, str]


@dataclass(slots=True)
class _Call:
    tool_call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class _Execution:
    call: _Call
    cwd: str
    ts: str
    is_error: bool
    source: str


@dataclass(slots=True)
class _Seen:
    """What the audit log knows: scopes per toolCallId, and unbound fingerprints."""

    by_call: dict[str, set[str | None]] = field(default_factory=dict)
    unbound: list[_Key] = field(default_factory=list)


def _key(data: dict[str, Any]) -> _Key | None:
    kind, tool, digest = data.get("actionKind"), data.get("toolName"), data.get("payloadHash")
    if not (isinstance(kind, str) and isinstance(tool, str) and isinstance(digest, str)):
        return None
    return (kind, tool, data.get("path"), data.get("scope"), digest)


def _seen(records: Iterable[AuditRecord]) -> _Seen:
    seen = _Seen()
    for record in records:
        data = record.data
        call = data.get("toolCallId")
        if isinstance(call, str):
            scope = data.get("scope")
            seen.by_call.setdefault(call, set()).add(scope if isinstance(scope, str) else None)
            continue
        key = _key(data)
        if key is not None:
            seen.unbound.append(key)
    return seen


def _guarded(call_id: str, fp: Fingerprint, seen: _Seen) -> bool:
    scopes = seen.by_call.get(call_id)
    if scopes is not None and (fp.scope in scopes or None in scopes):
        return True
    key = (fp.action_kind, fp.tool_name, fp.path, fp.scope, fp.payload_hash)
    if key in seen.unbound:
        seen.unbound.remove(key)
        return True
    return False


def _entries(path: Path, unreadable: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, entry) for the lines that can hold a header, a call or a result."""
    with path.open("rb") as stream:
        for number, frame in enumerate(iter_frames(stream, max_line=_MAX_ENTRY_BYTES), 1):
            if frame.oversize:
                unreadable[0] += 1
                continue
            if not any(marker in frame.data for marker in _MARKERS):
                continue
            try:
                entry = load_json(frame.data, max_bytes=_MAX_ENTRY_BYTES)
            except JsonInputError:
                unreadable[0] += 1
                continue
            if isinstance(entry, dict):
                yield number, entry


def _calls(message: dict[str, Any]) -> Iterator[_Call]:
    content = message.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict) or item.get("type") != "toolCall":
            continue
        call_id, name, arguments = item.get("id"), item.get("name"), item.get("arguments")
        if isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, dict):
            yield _Call(call_id, name, arguments)


def _executions(path: Path, unreadable: list[int]) -> Iterator[_Execution]:
    """Every call of one session file that has a result, in the order of the results."""
    cwd: str | None = None
    calls: dict[str, _Call] = {}
    for number, entry in _entries(path, unreadable):
        if entry.get("type") == "session" and isinstance(entry.get("cwd"), str):
            cwd = entry["cwd"]
            continue
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            calls.update((call.tool_call_id, call) for call in _calls(message))
        elif message.get("role") == "toolResult":
            call = calls.pop(str(message.get("toolCallId")), None)
            if call is None or cwd is None:
                continue
            ts = entry.get("timestamp")
            yield _Execution(
                call=call,
                cwd=cwd,
                ts=ts if isinstance(ts, str) else "",
                is_error=message.get("isError") is True,
                source=f"{path}:{number}",
            )


def guard_absent_rows(
    sessions: Path, records: Sequence[AuditRecord], classifier: PolicyCache
) -> tuple[list[ReportRow], ExternalSource]:
    """``guard-absent`` rows for the pi session files under ``sessions`` (recursively).

    ``records`` is the audit log the guard writes to; ``classifier`` the policy of its
    home. Returns the rows (file by file, in file order) and what was searched.
    """
    seen = _seen(records)
    files = sorted(p for p in sessions.rglob("*.jsonl") if p.is_file())
    unreadable = [0]
    rows: list[ReportRow] = []
    executions = 0
    for path in files:
        try:
            found = list(_executions(path, unreadable))
        except OSError:
            unreadable[0] += 1
            continue
        for run in found:
            try:
                judged = classify_call(classifier, run.call.name, run.call.arguments, run.cwd)
            except BadInputError:
                unreadable[0] += 1
                continue
            fp = judged.fingerprint
            if fp is None:  # local-safe
                continue
            executions += 1
            if _guarded(run.call.tool_call_id, fp, seen):
                continue
            rows.append(
                ReportRow(
                    seq=None,
                    ts=run.ts,
                    tool_call_id=run.call.tool_call_id,
                    tool_name=fp.tool_name,
                    action_kind=fp.action_kind,
                    path=fp.path,
                    scope=fp.scope,
                    payload_hash=fp.payload_hash,
                    is_error=run.is_error,
                    classification="audit-gap",
                    reason="guard-absent",
                    evidence_id=None,
                    consumption=None,
                    source=run.source,
                )
            )
    source = ExternalSource(
        kind=SESSIONS_KIND,
        location=str(sessions),
        files=len(files),
        executions=executions,
        gaps=len(rows),
        unreadable=unreadable[0],
    )
    return rows, source
