"""Late delivery on the facade: the events the pi shim spooled while no sidecar could take
them, their shapes (the sidecar's call params build on :class:`CallParams`), and their
replay, de-duplicated by spool id against the audit log.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from audit import LogIntegrityError
from audit.lines import LogLineError, check_line, lines_backward, open_snapshot
from audit.wire import WIRE_CONFIG, IsoMillis, SessionRef, parse_iso, utc_now
from guard._facade.core import Core
from guard._facade.fields import LateDeclineReason
from guard._facade.outcomes import Late, Outcomes

__all__ = [
    "REPLAY_SKEW",
    "CallParams",
    "OperatorReasonText",
    "ReplayRejected",
    "ReplayReply",
    "Spool",
    "SpooledDecline",
    "SpooledEvent",
    "SpooledExecuted",
    "logged_spool_ids",
]

# A spooled event's time may run ahead of this clock by at most this much (same machine).
REPLAY_SKEW = timedelta(minutes=10)


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class CallParams(_Wire):
    """A pending tool call, exactly as pi shows it to the extension."""

    tool_name: str = Field(min_length=1, max_length=256)
    input: dict[str, Any]
    cwd: str = Field(min_length=1, max_length=4096)
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)


# What the operator typed, as sent; the guard keeps a redacted line of at most 200 characters.
OperatorReasonText = Annotated[str, Field(max_length=4096)]

# -- audit.replay: events the shim kept in its spool while no sidecar could take them --------

SpoolId = Annotated[str, Field(pattern=r"^spool_[A-Za-z0-9_-]{16,64}$")]


class _Spooled(CallParams):
    """One spooled event: ``id`` is unique (a replay skips ids already logged), ``at`` is
    when it happened by the shim's clock, ``sessionId``/``sessionFile`` the pi session it
    happened in (its record names that session, not the one that delivers it)."""

    id: SpoolId
    at: IsoMillis
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    session_file: str | None = Field(default=None, min_length=1, max_length=4096)


class SpooledDecline(_Spooled):
    """A call that was blocked while the sidecar was down (``sidecar-unavailable``), an
    answer whose ``audit.declined`` never returned, or a yes whose ``record`` never
    returned (``confirmed-unrecorded``: no evidence, the call was blocked)."""

    kind: Literal["declined"]
    reason: LateDeclineReason
    operator_reason: OperatorReasonText | None = None


class SpooledExecuted(_Spooled):
    """A tool result whose ``audit.toolExecuted`` never returned."""

    kind: Literal["executed"]
    tool_call_id: str = Field(min_length=1, max_length=256)
    is_error: bool
    evidence_id: str | None = Field(default=None, min_length=1, max_length=128)


SpooledEvent = Annotated[SpooledDecline | SpooledExecuted, Field(discriminator="kind")]


class ReplayRejected(_Wire):
    id: str | None
    reason: str


class ReplayReply(_Wire):
    """Every event is in exactly one list: ``delivered`` (appended, marked ``deliveredLate``),
    ``duplicates`` (its id was already logged), ``skipped`` (the policy now allows the call:
    nothing to record) or ``rejected`` (invalid: it never will be). The shim may drop all."""

    delivered: list[str]
    duplicates: list[str]
    skipped: list[str]
    rejected: list[ReplayRejected]


@functools.cache
def _spooled() -> TypeAdapter[SpooledEvent]:
    """The spooled events' validator, built on the first replay rather than at import."""
    return TypeAdapter(SpooledEvent)


def logged_spool_ids(log_path: Path, since: datetime) -> set[str]:
    """``spoolId`` of every record of the log at ``log_path`` appended at or after ``since``
    (read backwards).

    A late event is appended after it happened, so records older than it cannot hold
    its id. A line that does not check is an integrity error: nothing is appended then.
    """
    found: set[str] = set()
    stream, size, _ = open_snapshot(log_path, with_head=False)
    with stream:
        for _offset, line in lines_backward(stream.fileno(), size):
            if not line.endswith(b"\n"):
                continue  # a torn final line
            try:
                rec = check_line(line[:-1])
            except LogLineError as fault:
                raise LogIntegrityError(log_path, fault.kind, fault.detail) from None
            if parse_iso(rec["ts"], "ts") < since:
                break
            data = rec["data"]
            spool_id = data.get("spoolId") if isinstance(data, dict) else None
            if isinstance(spool_id, str):
                found.add(spool_id)
    return found


class Spool:
    """:meth:`replay`: append what the shim spooled, each event once."""

    def __init__(self, core: Core, outcomes: Outcomes) -> None:
        self._core = core
        self._outcomes = outcomes

    def replay(self, events: Sequence[Any]) -> ReplayReply:
        """Append the events the shim spooled while no sidecar could take them, marked late.

        Each event is validated on its own; an id already in the log (searched back to the
        earliest event's time) is skipped, so a replay that is repeated (the shim died
        before truncating its spool, two pi processes share one spool) logs nothing twice.
        """
        reply = ReplayReply(delivered=[], duplicates=[], skipped=[], rejected=[])
        now = utc_now()
        valid: list[SpooledEvent] = []
        for raw in events:
            raw_id = raw.get("id") if isinstance(raw, dict) else None
            shown_id = raw_id[:80] if isinstance(raw_id, str) else None
            try:
                event = _spooled().validate_python(raw)
            except ValidationError as exc:
                where = ".".join(str(x) for x in exc.errors()[0]["loc"]) or "event"
                reply.rejected.append(ReplayRejected(id=shown_id, reason=f"invalid: {where}"))
                continue
            if parse_iso(event.at, "at") > now + REPLAY_SKEW:
                reply.rejected.append(ReplayRejected(id=event.id, reason="in-the-future"))
                continue
            valid.append(event)
        if not valid:
            return reply
        since = min(parse_iso(e.at, "at") for e in valid) - REPLAY_SKEW
        seen = logged_spool_ids(self._core.audit.path, since)
        for event in valid:
            if event.id in seen:
                reply.duplicates.append(event.id)
                continue
            seen.add(event.id)
            kept = (
                SessionRef(id=event.session_id, file=event.session_file)
                if event.session_id is not None
                else None
            )
            late = Late(spool_id=event.id, occurred_at_iso=event.at, session=kept)
            if isinstance(event, SpooledDecline) and event.reason == "input-changed-after-decision":
                self._outcomes.input_changed(
                    event.tool_name,
                    event.input,
                    event.cwd,
                    tool_call_id=event.tool_call_id,
                    late=late,
                )
                reply.delivered.append(event.id)
            elif isinstance(event, SpooledDecline):
                appended = self._outcomes.declined_late(
                    event.tool_name,
                    event.input,
                    event.cwd,
                    reason=event.reason,
                    late=late,
                    tool_call_id=event.tool_call_id,
                    operator_reason=event.operator_reason,
                )
                (reply.delivered if appended else reply.skipped).append(event.id)
            else:
                self._outcomes.tool_executed(
                    event.tool_call_id,
                    event.tool_name,
                    event.input,
                    event.cwd,
                    event.is_error,
                    event.evidence_id,
                    late=late,
                )
                reply.delivered.append(event.id)
        return reply
