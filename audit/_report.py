"""``pi-guard audit report``: was every destructive/protected execution confirmed first?

For each ``tool.executed`` whose ``actionKind`` is ``destructive`` or ``protected``,
only records *before* it count:

* a ``confirmation.recorded`` with the same ``toolCallId`` (or, failing that, one
  without a ``toolCallId``, with the same fingerprint, not yet matched to an earlier
  execution) whose fingerprint (actionKind, toolName, path, scope, payloadHash)
  equals the execution's → ``auditable``; ``consumption`` says whether an
  ``evidence.consumed`` for that evidence id exists anywhere in the log;
* otherwise ``audit-gap`` with the first reason that applies:
  ``input-changed-after-confirmation`` (a recorded evidence for this toolCallId, but
  another fingerprint), ``evidence-rejected`` (an ``evidence.rejected`` for it),
  ``evidence-declined`` (a ``confirmation.declined`` for it), ``no-evidence``.

Calls that did not run are counted too, so an auditor sees everything the operator was
asked and what happened: every ``confirmation.declined`` is a row of ``stopped`` (the
operator said no or did not answer: ``declined``, ``timeout``; or the guard blocked it:
``no-ui``, ``sidecar-unavailable``, ``blocked-by-policy``, ``confirmed-unrecorded``), with
``deliveredLate`` when the shim delivered it after a sidecar restart. The summary counts
``confirmations`` (``confirmation.recorded``), ``declined`` and ``blocked`` apart from the
executions; stopped calls never make a gap.

Scoped grants: a ``confirmation.recorded`` with ``coveredBy`` is a call a grant covered, with
its own evidence but no dialog. It is matched to its execution like any other (the row
names the grant in ``grantId``), but counted as ``coveredByGrant``, never as one of the
operator's ``confirmations``. Each grant the log names is one :class:`GrantRow`: what it
covers (its ``grant.created``), how many calls it covered and how many of those ran, and
how it ended (``grant.revoked``, ``grant.expired``); ``byGrant`` counts the covered calls
per grant id.

A declined or rejected record without a ``toolCallId`` counts for the first later
execution with its fingerprint. The report is report-only: it authorizes nothing.

Rows from outside the log: a caller that found executions elsewhere (``guard`` scans pi
session files for calls that ran with no guard record at all, reason ``guard-absent``)
passes them as ``external_rows`` with an ``ExternalSource`` saying where it looked. They
have no ``seq`` but a ``source``, follow the log's rows and count in the summary like any
other row. This module does not know where they came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from audit._errors import RecordDataError
from audit._models import (
    AuditRecord,
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    EvidenceConsumedData,
    EvidenceRejectedData,
    GrantCreatedData,
    GrantExpiredData,
    GrantRevokedData,
    GrantUsedData,
    ToolExecutedData,
)
from audit._show import session_of
from audit._table import render_table, safe_cell, short_hash
from audit._wire import WIRE_CONFIG, ActionKind

__all__ = [
    "GAP_REASONS",
    "AllowedRow",
    "AuditReport",
    "Classification",
    "ExternalSource",
    "GapReason",
    "GrantEnd",
    "GrantRow",
    "ReportRow",
    "ReportSummary",
    "StoppedRow",
    "build_report",
    "render_report",
]

Classification = Literal["auditable", "audit-gap"]
GapReason = Literal[
    "no-evidence",
    "evidence-declined",
    "evidence-rejected",
    "input-changed-after-confirmation",
    "guard-absent",
]
GAP_REASONS: tuple[str, ...] = get_args(GapReason)
GrantEnd = Literal[
    "revoked", "time", "uses", "session-ended", "key-rotated", "policy-changed", "switched-off"
]
"""How a grant ended: revoked by the operator, or the reason of its ``grant.expired``."""

_M = TypeVar("_M", bound=BaseModel)
_Fingerprint = tuple[str | None, str, str | None, str | None, str | None]


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class ReportRow(_Wire):
    """One destructive/protected execution and how it is classified.

    ``seq`` is the ``tool.executed`` record's; a row from outside the log has none and
    names its ``source`` instead (e.g. ``session-file:line``).
    """

    seq: int | None
    ts: str
    tool_call_id: str
    tool_name: str
    action_kind: ActionKind
    path: str | None
    scope: str | None
    payload_hash: str
    is_error: bool
    classification: Classification
    reason: GapReason | None
    evidence_id: str | None
    consumption: Literal["consumed", "not-consumed"] | None
    source: str | None = None
    preview: str | None = None
    session: str | None = None
    grant_id: str | None = None
    """The scoped grant that covered the call (its evidence names it), if one did."""
    operator_credential: str | None = None
    """The operator's enrolled authenticator that signed the call's evidence, if one did."""
    rejected: tuple[str, ...] | None = None
    """Why a consumer last refused the call's evidence (its ``evidence.rejected`` reasons,
    e.g. ``no-operator-signature``), when one did."""


OPERATOR_DECLINES: frozenset[str] = frozenset({"declined", "timeout"})
"""Reasons of a ``confirmation.declined`` that are the operator's answer; the rest are blocks."""


class StoppedRow(_Wire):
    """One call that did not run: a ``confirmation.declined`` record (see the docstring).

    ``outcome``: ``declined`` (the operator's No or no answer) or ``blocked`` (the guard).
    """

    seq: int
    ts: str
    tool_call_id: str | None
    tool_name: str
    action_kind: Literal["local-safe", "destructive", "protected"]
    path: str | None
    payload_hash: str
    outcome: Literal["declined", "blocked"]
    reason: str
    delivered_late: bool
    occurred_at_iso: str | None
    preview: str | None = None
    session: str | None = None


class AllowedRow(_Wire):
    """A call that ran without asking because a rule of the user's allowed it (one that
    relaxed a built-in rule, such as ``rm -rf build``): which rules, and what it was."""

    seq: int
    ts: str
    tool_call_id: str
    tool_name: str
    rule_ids: tuple[str, ...]
    preview: str | None
    payload_hash: str
    is_error: bool
    session: str | None = None


class GrantRow(_Wire):
    """One scoped grant as the log tells it: what it covers, how often it was used, how it
    ended.

    ``covered``: the calls it covered (``confirmation.recorded`` with its ``coveredBy``),
    each with its own evidence; ``ran``: those matched to an execution; ``uses``: the
    highest use its own records (``grant.used``, the end) count. ``ended``: ``revoked``
    (``ended_by`` ``cli`` or ``guard-command``) or the reason of its ``grant.expired``;
    ``None`` when the log records no end (still active when the log was read, or its
    time ran out unnoticed). What comes from ``grant.created`` (label, scope, limits, the
    ``evidence_id`` of the dialog that made it) is ``None`` when the log does not hold that
    record.
    """

    grant_id: str
    session: str | None
    label: str | None
    breadth: Literal["same-call", "same-directory"] | None
    scope: str | None
    globs: tuple[str, ...]
    created_seq: int | None
    created_at_iso: str | None
    expires_at_iso: str | None
    max_uses: int | None
    evidence_id: str | None
    covered: int
    ran: int
    uses: int
    ended: GrantEnd | None
    ended_by: Literal["cli", "guard-command"] | None
    ended_seq: int | None


class ExternalSource(_Wire):
    """A place outside the log that was searched for executions (``kind``, ``location``):
    how many ``files`` it read, how many destructive/protected ``executions`` it saw, how
    many of them became rows (``gaps``) and how many lines or items it could not read or
    classify (``unreadable``: executions in them are not counted)."""

    kind: str
    location: str
    files: int
    executions: int
    gaps: int
    unreadable: int = 0


class ReportSummary(_Wire):
    executions: int
    auditable: int
    audit_gaps: int
    gaps_by_reason: dict[str, int]
    consumed: int
    not_consumed: int
    confirmations: int = 0
    declined: int = 0
    blocked: int = 0
    blocked_by_reason: dict[str, int] = {}
    delivered_late: int = 0
    allowed_by_rule: int = 0
    allowed_by_rule_id: dict[str, int] = {}
    by_session: dict[str, dict[str, int]] = {}
    covered_by_grant: int = 0
    by_grant: dict[str, int] = {}
    operator_signed: int = 0
    """Confirmations whose evidence the operator's own authenticator signed (a passkey)."""
    rejected_by_reason: dict[str, int] = {}
    """Every ``evidence.rejected`` of the log, by reason: why consumers refused evidence."""


class AuditReport(_Wire):
    """``decision`` is ``no-gaps`` or ``gaps``; :attr:`exit_code` is 0 or 5."""

    decision: Literal["no-gaps", "gaps"]
    summary: ReportSummary
    rows: tuple[ReportRow, ...]
    external: tuple[ExternalSource, ...] = ()
    stopped: tuple[StoppedRow, ...] = ()
    allowed: tuple[AllowedRow, ...] = ()
    grants: tuple[GrantRow, ...] = ()

    @property
    def exit_code(self) -> int:
        return 0 if self.decision == "no-gaps" else 5


@dataclass(slots=True)
class _Recorded:
    evidence_id: str
    fingerprint: _Fingerprint
    grant_id: str | None = None
    operator_credential: str | None = None


_GRANT_EVENTS = ("grant.created", "grant.used", "grant.revoked", "grant.expired")


def _fingerprint(
    data: ConfirmationRecordedData
    | ConfirmationDeclinedData
    | EvidenceRejectedData
    | ToolExecutedData,
) -> _Fingerprint:
    return (data.action_kind, data.tool_name, data.path, data.scope, data.payload_hash)


def _typed(record: AuditRecord, model: type[_M]) -> _M:
    try:
        return model.model_validate(record.data)
    except ValidationError:
        raise RecordDataError(record.seq, record.event) from None


def build_report(
    records: Iterable[AuditRecord],
    *,
    external_rows: Iterable[ReportRow] = (),
    external_sources: Iterable[ExternalSource] = (),
) -> AuditReport:
    """Classify every destructive/protected ``tool.executed`` (see the module docstring).

    ``external_rows`` are appended after the log's rows as they are and counted in the
    summary; ``external_sources`` are reported as given.
    """
    relevant = [
        r
        for r in records
        if r.event
        in (
            "confirmation.recorded",
            "confirmation.declined",
            "evidence.consumed",
            "evidence.rejected",
            "tool.executed",
            *_GRANT_EVENTS,
        )
    ]
    consumed_ids = {
        _typed(r, EvidenceConsumedData).evidence_id
        for r in relevant
        if r.event == "evidence.consumed"
    }
    refusals = [_typed(r, EvidenceRejectedData) for r in relevant if r.event == "evidence.rejected"]
    rejected_ids = {r.evidence_id: tuple(r.reasons) for r in refusals if r.evidence_id}
    by_call: dict[str, list[_Recorded]] = {}
    unbound: list[_Recorded] = []
    used: set[str] = set()
    declined_calls: set[str] = set()
    rejected_calls: set[str] = set()
    declined_unbound: list[_Fingerprint] = []
    rejected_unbound: list[_Fingerprint] = []
    rows: list[ReportRow] = []
    stopped: list[StoppedRow] = []
    allowed: list[AllowedRow] = []
    confirmations = 0
    confirmed_in: list[str | None] = []
    late = 0
    grants: dict[str, _Grant] = {}

    for record in relevant:
        if record.event in _GRANT_EVENTS:
            _grant_event(grants, record)
        elif record.event == "confirmation.recorded":
            rec = _typed(record, ConfirmationRecordedData)
            grant_id = rec.covered_by.grant_id if rec.covered_by is not None else None
            if grant_id is None:
                confirmations += 1
                confirmed_in.append(session_of(record))
            else:
                _grant(grants, grant_id, record).covered += 1
            item = _Recorded(rec.evidence_id, _fingerprint(rec), grant_id, rec.operator_credential)
            if rec.tool_call_id is None:
                unbound.append(item)
            else:
                by_call.setdefault(rec.tool_call_id, []).append(item)
        elif record.event == "confirmation.declined":
            dec = _typed(record, ConfirmationDeclinedData)
            stopped.append(_stopped(record, dec))
            if dec.tool_call_id is None:
                declined_unbound.append(_fingerprint(dec))
            else:
                declined_calls.add(dec.tool_call_id)
        elif record.event == "evidence.rejected":
            rej = _typed(record, EvidenceRejectedData)
            if rej.tool_call_id is None:
                rejected_unbound.append(_fingerprint(rej))
            else:
                rejected_calls.add(rej.tool_call_id)
        elif record.event == "tool.executed":
            run = _typed(record, ToolExecutedData)
            late += bool(run.delivered_late)
            if run.action_kind == "local-safe":
                if run.rule_ids:
                    allowed.append(_allowed(record, run))
                continue
            rows.append(
                _classify(
                    record,
                    run,
                    by_call=by_call,
                    unbound=unbound,
                    used=used,
                    declined_calls=declined_calls,
                    rejected_calls=rejected_calls,
                    declined_unbound=declined_unbound,
                    rejected_unbound=rejected_unbound,
                    consumed_ids=consumed_ids,
                )
            )

    for i, row in enumerate(rows):
        if row.grant_id is not None:
            grants[row.grant_id].ran += 1
        if row.consumption == "not-consumed" and row.evidence_id in rejected_ids:
            rows[i] = row.model_copy(update={"rejected": rejected_ids[row.evidence_id]})
    rows.extend(external_rows)
    gaps_by_reason = dict.fromkeys(GAP_REASONS, 0)
    for row in rows:
        if row.reason is not None:
            gaps_by_reason[row.reason] += 1
    gaps = sum(gaps_by_reason.values())
    summary = ReportSummary(
        executions=len(rows),
        auditable=len(rows) - gaps,
        audit_gaps=gaps,
        gaps_by_reason=gaps_by_reason,
        consumed=sum(1 for r in rows if r.consumption == "consumed"),
        not_consumed=sum(1 for r in rows if r.consumption == "not-consumed"),
        confirmations=confirmations,
        declined=sum(1 for r in stopped if r.outcome == "declined"),
        blocked=sum(1 for r in stopped if r.outcome == "blocked"),
        blocked_by_reason=_count(r.reason for r in stopped if r.outcome == "blocked"),
        delivered_late=late + sum(1 for r in stopped if r.delivered_late),
        allowed_by_rule=len(allowed),
        allowed_by_rule_id=_count(i for r in allowed for i in r.rule_ids),
        by_session=_by_session(rows, stopped, allowed, confirmed_in),
        covered_by_grant=sum(g.covered for g in grants.values()),
        by_grant={g.grant_id: g.covered for g in grants.values()},
        operator_signed=sum(
            1
            for r in relevant
            if r.event == "confirmation.recorded"
            and _typed(r, ConfirmationRecordedData).operator_credential is not None
        ),
        rejected_by_reason=_count(reason for r in refusals for reason in r.reasons),
    )
    return AuditReport(
        decision="gaps" if gaps else "no-gaps",
        summary=summary,
        rows=tuple(rows),
        external=tuple(external_sources),
        stopped=tuple(stopped),
        allowed=tuple(allowed),
        grants=tuple(g.row() for g in grants.values()),
    )


@dataclass(slots=True)
class _Grant:
    """A grant's row while the records are read (see :class:`GrantRow`)."""

    grant_id: str
    session: str | None
    created: GrantCreatedData | None = None
    created_seq: int | None = None
    covered: int = 0
    ran: int = 0
    uses: int = 0
    ended: GrantEnd | None = None
    ended_by: Literal["cli", "guard-command"] | None = None
    ended_seq: int | None = None

    def row(self) -> GrantRow:
        made = self.created
        return GrantRow(
            grant_id=self.grant_id,
            session=self.session,
            label=None if made is None else made.label,
            breadth=None if made is None else made.breadth,
            scope=None if made is None else made.pattern.scope,
            globs=() if made is None else tuple(made.pattern.globs),
            created_seq=self.created_seq,
            created_at_iso=None if made is None else made.created_at_iso,
            expires_at_iso=None if made is None else made.expires_at_iso,
            max_uses=None if made is None else made.max_uses,
            evidence_id=None if made is None else made.evidence_id,
            covered=self.covered,
            ran=self.ran,
            uses=self.uses,
            ended=self.ended,
            ended_by=self.ended_by,
            ended_seq=self.ended_seq,
        )


def _grant(grants: dict[str, _Grant], grant_id: str, record: AuditRecord) -> _Grant:
    """The tally of ``grant_id``, started at the first record that names it."""
    found = grants.get(grant_id)
    if found is None:
        found = grants[grant_id] = _Grant(grant_id, session_of(record))
    return found


def _grant_event(grants: dict[str, _Grant], record: AuditRecord) -> None:
    """What one ``grant.*`` record says about its grant."""
    if record.event == "grant.created":
        made = _typed(record, GrantCreatedData)
        tally = _grant(grants, made.grant_id, record)
        tally.session = session_of(record) or tally.session
        tally.created, tally.created_seq = made, record.seq
    elif record.event == "grant.used":
        used = _typed(record, GrantUsedData)
        tally = _grant(grants, used.grant_id, record)
        tally.uses = max(tally.uses, used.use)
    elif record.event == "grant.revoked":
        revoked = _typed(record, GrantRevokedData)
        tally = _grant(grants, revoked.grant_id, record)
        tally.uses = max(tally.uses, revoked.uses)
        if tally.ended is None:  # the first end is the grant's end
            tally.ended, tally.ended_by, tally.ended_seq = "revoked", revoked.by, record.seq
    else:
        expired = _typed(record, GrantExpiredData)
        tally = _grant(grants, expired.grant_id, record)
        tally.uses = max(tally.uses, expired.uses)
        if tally.ended is None:
            tally.ended, tally.ended_seq = expired.reason, record.seq


_NO_SESSION = "(no session)"


def _by_session(
    rows: list[ReportRow],
    stopped: list[StoppedRow],
    allowed: list[AllowedRow],
    confirmed_in: list[str | None],
) -> dict[str, dict[str, int]]:
    """Per pi session (records that name none under ``(no session)``): what ran, what was
    a gap, confirmed, declined, blocked, and allowed by a user rule."""
    out: dict[str, dict[str, int]] = {}

    def bump(session: str | None, key: str) -> None:
        counts = out.setdefault(
            session or _NO_SESSION,
            dict.fromkeys(("executions", "gaps", "confirmed", "declined", "blocked",
                           "allowedByRule"), 0),
        )  # fmt: skip
        counts[key] += 1

    for row in rows:
        if row.source is None:
            bump(row.session, "executions")
            if row.reason is not None:
                bump(row.session, "gaps")
    for session in confirmed_in:
        bump(session, "confirmed")
    for stop in stopped:
        bump(stop.session, stop.outcome)
    for allow in allowed:
        bump(allow.session, "allowedByRule")
    return dict(sorted(out.items()))


def _allowed(record: AuditRecord, run: ToolExecutedData) -> AllowedRow:
    return AllowedRow(
        seq=record.seq,
        ts=record.ts,
        tool_call_id=run.tool_call_id,
        tool_name=run.tool_name,
        rule_ids=tuple(run.rule_ids or ()),
        preview=run.preview,
        payload_hash=run.payload_hash,
        is_error=run.is_error,
        session=session_of(record),
    )


def _count_by(items: Iterable[tuple[str, int]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, n in items:
        counts[key] = counts.get(key, 0) + n
    return counts


def _count(reasons: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


def _stopped(record: AuditRecord, dec: ConfirmationDeclinedData) -> StoppedRow:
    return StoppedRow(
        seq=record.seq,
        ts=record.ts,
        tool_call_id=dec.tool_call_id,
        tool_name=dec.tool_name,
        action_kind=dec.action_kind,
        path=dec.path,
        payload_hash=dec.payload_hash,
        outcome="declined" if dec.reason in OPERATOR_DECLINES else "blocked",
        reason=dec.reason,
        delivered_late=bool(dec.delivered_late),
        occurred_at_iso=dec.occurred_at_iso,
        preview=dec.preview,
        session=session_of(record),
    )


def _take(items: list[_Fingerprint], fingerprint: _Fingerprint) -> bool:
    try:
        items.remove(fingerprint)
    except ValueError:
        return False
    return True


def _classify(
    record: AuditRecord,
    run: ToolExecutedData,
    *,
    by_call: dict[str, list[_Recorded]],
    unbound: list[_Recorded],
    used: set[str],
    declined_calls: set[str],
    rejected_calls: set[str],
    declined_unbound: list[_Fingerprint],
    rejected_unbound: list[_Fingerprint],
    consumed_ids: set[str],
) -> ReportRow:
    assert run.action_kind != "local-safe"
    fingerprint = _fingerprint(run)
    reason: GapReason | None = None
    evidence_id: str | None = None
    matched: _Recorded | None = None
    candidates = by_call.get(run.tool_call_id, [])
    if candidates:
        matched = next((c for c in candidates if c.fingerprint == fingerprint), None)
        if matched is None:
            reason = "input-changed-after-confirmation"
            evidence_id = candidates[-1].evidence_id
    else:
        matched = next(
            (c for c in unbound if c.fingerprint == fingerprint and c.evidence_id not in used),
            None,
        )
        if matched is None:
            if run.tool_call_id in rejected_calls or _take(rejected_unbound, fingerprint):
                reason = "evidence-rejected"
            elif run.tool_call_id in declined_calls or _take(declined_unbound, fingerprint):
                reason = "evidence-declined"
            else:
                reason = "no-evidence"
    consumption: Literal["consumed", "not-consumed"] | None = None
    if matched is not None:
        used.add(matched.evidence_id)
        evidence_id = matched.evidence_id
        consumption = "consumed" if matched.evidence_id in consumed_ids else "not-consumed"
    return ReportRow(
        seq=record.seq,
        ts=record.ts,
        tool_call_id=run.tool_call_id,
        tool_name=run.tool_name,
        action_kind=run.action_kind,
        path=run.path,
        scope=run.scope,
        payload_hash=run.payload_hash,
        is_error=run.is_error,
        classification="auditable" if reason is None else "audit-gap",
        reason=reason,
        evidence_id=evidence_id,
        consumption=consumption,
        preview=run.preview,
        session=session_of(record),
        grant_id=None if matched is None else matched.grant_id,
        operator_credential=None if matched is None else matched.operator_credential,
    )


TABLE_WIDTH = 120
"""The compact tables fit this many characters a line; ``wide`` shows every column."""


def _when(ts: str) -> str:
    """``MM-DD HH:MM:SS`` of an ISO timestamp (the JSON keeps it whole)."""
    return f"{ts[5:10]} {ts[11:19]}" if len(ts) >= 19 else ts


def _result(row: ReportRow) -> str:
    if row.reason is not None:
        return f"GAP {row.reason}"
    ok = "ok by grant" if row.grant_id is not None else "ok"
    return f"{ok}, {row.consumption or 'not consumed'}".replace("not-consumed", "not consumed")


def _grant_end(grant: GrantRow) -> str:
    """How a grant ended, in a few words (``not ended``: the log records no end)."""
    if grant.ended is None:
        return "not ended"
    if grant.ended == "revoked":
        return "revoked (/guard)" if grant.ended_by == "guard-command" else "revoked (pi-guard)"
    return f"expired ({grant.ended})"


def _grant_calls(grant: GrantRow) -> str:
    return f"{grant.covered}" if grant.max_uses is None else f"{grant.covered}/{grant.max_uses}"


def _grants_table(report: AuditReport, *, wide: bool) -> str:
    """The scoped grants: what each covers, how many calls it covered, how it ended."""
    if not report.grants:
        return ""
    if wide:
        rows = [
            [
                "-" if g.created_seq is None else str(g.created_seq),
                g.created_at_iso or "-",
                g.grant_id,
                g.session or "-",
                g.breadth or "-",
                str(g.covered),
                str(g.ran),
                str(g.uses),
                "-" if g.max_uses is None else str(g.max_uses),
                g.expires_at_iso or "-",
                _grant_end(g) + ("" if g.ended_seq is None else f" at seq {g.ended_seq}"),
                g.evidence_id or "-",
                g.label or "-",
            ]
            for g in report.grants
        ]
        headers = ["SEQ", "TIME", "GRANT", "SESSION", "BREADTH", "COVERED", "RAN", "USES",
                   "MAX", "EXPIRES", "ENDED", "EVIDENCE", "COVERS"]  # fmt: skip
        return "\nscoped grants (calls each covered without a dialog):\n" + render_table(
            headers, rows
        )
    rows = [
        [
            "-" if g.created_seq is None else str(g.created_seq),
            g.grant_id,
            _grant_calls(g),
            _grant_end(g),
            g.label or "-",
        ]
        for g in report.grants
    ]
    headers = ["SEQ", "GRANT", "COVERED", "ENDED", "COVERS"]
    return "\nscoped grants (calls each covered without a dialog):\n" + render_table(
        headers, rows, width=TABLE_WIDTH
    )


def _compact_tables(report: AuditReport, external: bool) -> str:
    """The per-call tables within :data:`TABLE_WIDTH`: what, when, the result and what it
    was; hashes, call ids and the rest are in ``--wide`` and ``--json``."""
    rows = [
        [
            "-" if r.seq is None else str(r.seq),
            _when(r.ts),
            r.tool_name,
            r.action_kind,
            _result(r),
            r.evidence_id or "-",
            (r.source + ": " if external and r.source else "") + (r.preview or r.path or "-"),
        ]
        for r in report.rows
    ]
    headers = ["SEQ", "TIME", "TOOL", "KIND", "RESULT", "EVIDENCE", "WHAT"]
    text = (
        render_table(headers, rows, width=TABLE_WIDTH)
        if rows
        else "(no destructive or protected executions)\n"
    )
    if report.stopped:
        stopped = [
            [str(r.seq), _when(r.ts), r.tool_name, r.action_kind,
             f"{r.outcome}: {r.reason}" + (" (late)" if r.delivered_late else ""),
             r.preview or r.path or "-"]
            for r in report.stopped
        ]  # fmt: skip
        headers = ["SEQ", "TIME", "TOOL", "KIND", "OUTCOME", "WHAT"]
        text += "\ncalls that did not run:\n" + render_table(headers, stopped, width=TABLE_WIDTH)
    if report.allowed:
        allowed = [
            [str(r.seq), _when(r.ts), r.tool_name, ",".join(r.rule_ids), r.preview or "-"]
            for r in report.allowed
        ]
        headers = ["SEQ", "TIME", "TOOL", "RULES", "WHAT"]
        text += "\nran without asking because a user rule allowed it:\n" + render_table(
            headers, allowed, width=TABLE_WIDTH
        )
    return text + _grants_table(report, wide=False)


def _wide_tables(report: AuditReport, external: bool) -> str:
    """Every column of every row (``audit report --wide``)."""
    grants = any(r.grant_id is not None for r in report.rows)
    rows = [
        [
            "-" if r.seq is None else str(r.seq),
            r.ts,
            r.tool_name,
            r.tool_call_id,
            r.action_kind,
            r.classification,
            r.reason or "-",
            r.evidence_id or "-",
            r.consumption or "-",
            "yes" if r.is_error else "no",
            short_hash(r.payload_hash),
            r.preview or r.path or "-",
            *([r.source or "-"] if external else []),
            *([r.grant_id or "-"] if grants else []),
        ]
        for r in report.rows
    ]
    headers = [
        "SEQ",
        "TIME",
        "TOOL",
        "CALL",
        "KIND",
        "CLASS",
        "REASON",
        "EVIDENCE",
        "CONSUMPTION",
        "ERROR",
        "PAYLOAD",
        "WHAT",
        *(["SOURCE"] if external else []),
        *(["GRANT"] if grants else []),
    ]
    text = render_table(headers, rows) if rows else "(no destructive or protected executions)\n"
    if report.stopped:
        stopped = [
            [
                str(r.seq),
                r.ts,
                r.tool_name,
                r.tool_call_id or "-",
                r.action_kind,
                r.outcome,
                r.reason,
                f"yes ({r.occurred_at_iso})" if r.delivered_late else "no",
                short_hash(r.payload_hash),
                r.preview or r.path or "-",
            ]
            for r in report.stopped
        ]
        headers = ["SEQ", "TIME", "TOOL", "CALL", "KIND", "OUTCOME", "REASON", "LATE"]
        text += "\ncalls that did not run:\n" + render_table([*headers, "PAYLOAD", "WHAT"], stopped)
    if report.allowed:
        allowed = [
            [str(r.seq), r.ts, r.tool_name, r.tool_call_id, ",".join(r.rule_ids),
             "yes" if r.is_error else "no", short_hash(r.payload_hash), r.preview or "-"]
            for r in report.allowed
        ]  # fmt: skip
        headers = ["SEQ", "TIME", "TOOL", "CALL", "RULES", "ERROR", "PAYLOAD", "WHAT"]
        text += "\nran without asking because a user rule allowed it:\n" + render_table(
            headers, allowed
        )
    return text + _grants_table(report, wide=True)


def render_report(report: AuditReport, *, wide: bool = False) -> str:
    """Summary lines and the per-call tables for people: within 120 characters a line, or
    every column with ``wide``."""
    s = report.summary
    lines = [
        f"audit report: {report.decision}",
        f"  destructive/protected executions: {s.executions}",
        f"  auditable: {s.auditable}  (consumed: {s.consumed}, not consumed: {s.not_consumed})",
        f"  audit gaps: {s.audit_gaps}",
    ]
    lines.extend(f"    {reason}: {count}" for reason, count in s.gaps_by_reason.items() if count)
    lines.append(f"  confirmed by the operator: {s.confirmations}")
    if s.operator_signed:
        lines.append(f"    signed by the operator's own passkey: {s.operator_signed}")
    if s.rejected_by_reason:
        lines.append("  evidence refused by a consumer:")
        lines.extend(f"    {reason}: {count}" for reason, count in s.rejected_by_reason.items())
    if report.grants or s.covered_by_grant:
        lines.append(
            f"  covered by a scoped grant (no dialog, each its own evidence): {s.covered_by_grant}"
            f" (grants: {len(report.grants)})"
        )
    lines.append(f"  declined by the operator (did not run): {s.declined}")
    lines.append(f"  blocked by the guard (did not run): {s.blocked}")
    lines.extend(f"    {reason}: {count}" for reason, count in s.blocked_by_reason.items())
    if s.delivered_late:
        lines.append(f"  delivered late (after a sidecar restart): {s.delivered_late}")
    lines.append(f"  ran without asking because a user rule allowed it: {s.allowed_by_rule}")
    lines.extend(f"    {rule}: {count}" for rule, count in s.allowed_by_rule_id.items())
    if len(s.by_session) > 1 or (s.by_session and _NO_SESSION not in s.by_session):
        covered = _count_by(
            (g.session or _NO_SESSION, g.covered) for g in report.grants if g.covered
        )
        lines.append("  by pi session:")
        lines.extend(
            f"    {safe_cell(session)[:48]}: {c['executions']} risky ran ({c['gaps']} gaps),"
            f" {c['confirmed']} yes, {c['declined']} no, {c['blocked']} blocked,"
            f" {c['allowedByRule']} by a user rule"
            + (f", {covered[session]} by a grant" if session in covered else "")
            for session, c in s.by_session.items()
        )
    lines.extend(
        f"  also searched {x.kind} in {x.location}: {x.files} files,"
        f" {x.executions} destructive/protected executions, {x.gaps} added as gaps"
        + (f", {x.unreadable} unreadable (not counted)" if x.unreadable else "")
        for x in report.external
    )
    external = any(r.source is not None for r in report.rows)
    if wide:
        text = "\n".join(lines) + "\n\n" + _wide_tables(report, external)
    else:
        text = "\n".join(lines) + "\n\n" + _compact_tables(report, external)
    return text
