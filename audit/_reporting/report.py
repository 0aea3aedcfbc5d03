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
``no-ui``, ``sidecar-unavailable``, ``blocked-by-policy``, ``confirmed-unrecorded``; or the
operator's "No, and stop the agent": ``stopped``, the call asked and every other call of
that turn), with ``deliveredLate`` when the shim delivered it after a sidecar restart. The
summary counts ``confirmations`` (``confirmation.recorded``), ``declined``, ``stopped`` and
``blocked`` apart from the executions; calls that did not run never make a gap.

The effects review: each ``effects.reviewed`` that changed something is an
:class:`EffectsRow` (what was held, applied or discarded and by whom; see
:mod:`audit._reporting.effects`), counted in ``effectsReviewed``, ``effectsHeld`` and
``effectsByOutcome``. A destructive call that ran without a dialog
because every target was restorable against the operator's baseline (``ranUnasked``) is
counted as ``ranUnasked``, never as a gap nor as confirmed.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from audit._records.call_events import (
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    EvidenceConsumedData,
    EvidenceRejectedData,
    ToolExecutedData,
)
from audit._records.models import AuditRecord
from audit._reporting.effects import EFFECTS_EVENTS, effects_rows
from audit._reporting.grants import GRANT_EVENTS, GrantTally, grant_event, tally_of
from audit._reporting.rows import (
    GAP_REASONS,
    NO_SESSION,
    OPERATOR_DECLINES,
    AllowedRow,
    AuditReport,
    ExternalSource,
    GapReason,
    ReportRow,
    ReportSummary,
    StoppedRow,
    typed,
)
from audit._reporting.show import session_of

__all__ = ["build_report"]

_Fingerprint = tuple[str | None, str, str | None, str | None, str | None]


@dataclass(slots=True)
class _Recorded:
    evidence_id: str
    fingerprint: _Fingerprint
    grant_id: str | None = None
    operator_credential: str | None = None


def _fingerprint(
    data: ConfirmationRecordedData
    | ConfirmationDeclinedData
    | EvidenceRejectedData
    | ToolExecutedData,
) -> _Fingerprint:
    return (data.action_kind, data.tool_name, data.path, data.scope, data.payload_hash)


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
            *GRANT_EVENTS,
            *EFFECTS_EVENTS,
        )
    ]
    consumed_ids = {
        typed(r, EvidenceConsumedData).evidence_id
        for r in relevant
        if r.event == "evidence.consumed"
    }
    refusals = [typed(r, EvidenceRejectedData) for r in relevant if r.event == "evidence.rejected"]
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
    unasked: list[tuple[str | None, ToolExecutedData]] = []
    confirmations = 0
    confirmed_in: list[str | None] = []
    late = 0
    grants: dict[str, GrantTally] = {}

    for record in relevant:
        if record.event in GRANT_EVENTS:
            grant_event(grants, record)
        elif record.event == "confirmation.recorded":
            rec = typed(record, ConfirmationRecordedData)
            grant_id = rec.covered_by.grant_id if rec.covered_by is not None else None
            if grant_id is None:
                confirmations += 1
                confirmed_in.append(session_of(record))
            else:
                tally_of(grants, grant_id, record).covered += 1
            item = _Recorded(rec.evidence_id, _fingerprint(rec), grant_id, rec.operator_credential)
            if rec.tool_call_id is None:
                unbound.append(item)
            else:
                by_call.setdefault(rec.tool_call_id, []).append(item)
        elif record.event == "confirmation.declined":
            dec = typed(record, ConfirmationDeclinedData)
            stopped.append(_stopped(record, dec))
            if dec.tool_call_id is None:
                declined_unbound.append(_fingerprint(dec))
            else:
                declined_calls.add(dec.tool_call_id)
        elif record.event == "evidence.rejected":
            rej = typed(record, EvidenceRejectedData)
            if rej.tool_call_id is None:
                rejected_unbound.append(_fingerprint(rej))
            else:
                rejected_calls.add(rej.tool_call_id)
        elif record.event == "tool.executed":
            run = typed(record, ToolExecutedData)
            late += bool(run.delivered_late)
            if run.ran_unasked:
                # Every target restorable against the operator's baseline: counted on its
                # own line, never a gap and never a confirmation.
                unasked.append((session_of(record), run))
                continue
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

    effects = effects_rows(relevant)
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
        stopped=sum(1 for r in stopped if r.outcome == "stopped"),
        blocked=sum(1 for r in stopped if r.outcome == "blocked"),
        blocked_by_reason=_count(r.reason for r in stopped if r.outcome == "blocked"),
        delivered_late=late + sum(1 for r in stopped if r.delivered_late),
        allowed_by_rule=len(allowed),
        allowed_by_rule_id=_count(i for r in allowed for i in r.rule_ids),
        ran_unasked=len(unasked),
        ran_unasked_by_reason=_count(t.reason for _, r in unasked for t in r.ran_unasked or ()),
        by_session=_by_session(rows, stopped, allowed, confirmed_in, [s for s, _ in unasked]),
        covered_by_grant=sum(g.covered for g in grants.values()),
        by_grant={g.grant_id: g.covered for g in grants.values()},
        operator_signed=sum(
            1
            for r in relevant
            if r.event == "confirmation.recorded"
            and typed(r, ConfirmationRecordedData).operator_credential is not None
        ),
        rejected_by_reason=_count(reason for r in refusals for reason in r.reasons),
        effects_reviewed=len(effects),
        effects_held=sum(1 for e in effects if e.held),
        effects_by_outcome=_count(
            e.outcome if e.by is None else f"{e.outcome} by {e.by}" for e in effects
        ),
    )
    return AuditReport(
        decision="gaps" if gaps else "no-gaps",
        summary=summary,
        rows=tuple(rows),
        external=tuple(external_sources),
        stopped=tuple(stopped),
        allowed=tuple(allowed),
        grants=tuple(g.row() for g in grants.values()),
        effects=tuple(effects),
    )


def _by_session(
    rows: list[ReportRow],
    stopped: list[StoppedRow],
    allowed: list[AllowedRow],
    confirmed_in: list[str | None],
    unasked_in: Sequence[str | None] = (),
) -> dict[str, dict[str, int]]:
    """Per pi session (records that name none under ``(no session)``): what ran, what was
    a gap, confirmed, declined, blocked, allowed by a user rule, and ran unasked with every
    target restorable."""
    out: dict[str, dict[str, int]] = {}

    def bump(session: str | None, key: str) -> None:
        counts = out.setdefault(
            session or NO_SESSION,
            dict.fromkeys(("executions", "gaps", "confirmed", "declined", "stopped",
                           "blocked", "allowedByRule"), 0),
        )  # fmt: skip
        counts[key] = counts.get(key, 0) + 1  # ranUnasked: only where a call ran so

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
    for session in unasked_in:
        bump(session, "ranUnasked")
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
        outcome="stopped"
        if dec.reason == "stopped"
        else "declined"
        if dec.reason in OPERATOR_DECLINES
        else "blocked",
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
