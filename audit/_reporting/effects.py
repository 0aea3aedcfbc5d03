"""The effects review as the log tells it: what each agent command did to the workspace, what
of it was held, and who settled it.

Each ``effects.reviewed`` that changed something is one :class:`EffectsRow`, settled by the
``effects.resolved`` of the same layer when there is one:

* nothing held: ``applied`` at once, ``by`` the user rule that allowed the call (its
  ``tool.executed`` names ``ruleIds``), the operator's yes to the call (a
  ``confirmation.recorded`` for it) or ``nothing-lost`` (the review's own rules);
* held and answered: ``applied`` or ``discarded`` ``by`` the ``operator`` (on the screen
  ``approver`` names) or, for a discard, ``timeout``, ``no-ui`` or ``sidecar-restart``;
* held with no answer in the log: ``held`` (still waiting when the log was read).

The command is the call's ``preview`` (its ``tool.executed``, else its
``confirmation.recorded``), when the log keeps previews.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from audit._records.call_events import (
    ConfirmationRecordedData,
    EffectsResolvedData,
    EffectsReviewedData,
    ToolExecutedData,
)
from audit._records.fields import Approver
from audit._records.models import AuditRecord
from audit._reporting.rows import EffectsRow, SettledBy, typed
from audit._reporting.show import session_of

__all__ = ["EFFECTS_EVENTS", "effects_rows"]

EFFECTS_EVENTS = ("effects.reviewed", "effects.resolved")

_BY: dict[str, SettledBy] = {
    "timeout": "timeout",
    "no-ui": "no-ui",
    "sidecar-restart": "sidecar-restart",
}
"""A discard nobody answered: why (a ``declined`` is the operator's)."""


def _held_paths(data: EffectsReviewedData) -> tuple[str, ...]:
    return tuple(f"{h.kind} {h.path} ({h.reason})" for h in data.held)


def effects_rows(records: Sequence[AuditRecord]) -> list[EffectsRow]:
    """One row per ``effects.reviewed`` that changed something, in log order."""
    previews: dict[str, str] = {}
    ruled: set[str] = set()
    confirmed: set[str] = set()
    resolved: dict[str, tuple[AuditRecord, EffectsResolvedData]] = {}
    reviews: list[tuple[AuditRecord, EffectsReviewedData]] = []
    for record in records:
        if record.event == "effects.reviewed":
            review = typed(record, EffectsReviewedData)
            if review.decision != "empty":
                reviews.append((record, review))
        elif record.event == "effects.resolved":
            settled = typed(record, EffectsResolvedData)
            resolved.setdefault(settled.layer, (record, settled))
        elif record.event == "tool.executed":
            run = typed(record, ToolExecutedData)
            if run.preview:
                previews[run.tool_call_id] = run.preview
            if run.rule_ids and run.action_kind == "local-safe":
                ruled.add(run.tool_call_id)
        elif record.event == "confirmation.recorded":
            rec = typed(record, ConfirmationRecordedData)
            if rec.tool_call_id is not None:
                confirmed.add(rec.tool_call_id)
                if rec.preview:
                    previews.setdefault(rec.tool_call_id, rec.preview)
    rows = []
    for record, review in reviews:
        call = review.tool_call_id
        answer = resolved.get(review.layer)
        by: SettledBy | None
        approver: Approver | None = None
        evidence_id = None
        resolved_seq = None
        if review.decision == "applied":
            outcome: Literal["applied", "discarded", "held"] = "applied"
            by = (
                "user-rule"
                if call in ruled
                else "call-approved"
                if call in confirmed
                else "nothing-lost"
            )
        elif answer is None:
            outcome, by = "held", None
        else:
            seq, data = answer[0].seq, answer[1]
            outcome, approver, evidence_id, resolved_seq = (
                data.decision, data.approver, data.evidence_id, seq
            )  # fmt: skip
            by = "operator" if data.approver is not None else _BY.get(data.reason or "", "operator")
        rows.append(
            EffectsRow(
                seq=record.seq,
                ts=record.ts,
                layer=review.layer,
                tool_call_id=call,
                session=session_of(record),
                command=previews.get(call) if call is not None else None,
                outcome=outcome,
                by=by,
                approver=approver,
                held=review.decision == "held",
                held_total=review.held_total,
                held_paths=_held_paths(review),
                counts=dict(review.counts),
                evidence_id=evidence_id,
                resolved_seq=resolved_seq,
            )
        )
    return rows
