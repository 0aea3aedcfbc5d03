"""The report's shapes: a row per destructive/protected execution, per call that did not
run, per call a user rule allowed and per scoped grant; the places outside the log that
were searched; the summary and the report itself. Also :func:`typed`: a record's data read
as its event's model.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from audit._errors import RecordDataError
from audit._records.fields import Approver
from audit._records.models import AuditRecord
from audit._records.wire import WIRE_CONFIG, ActionKind

__all__ = [
    "GAP_REASONS",
    "NO_SESSION",
    "OPERATOR_DECLINES",
    "AllowedRow",
    "AuditReport",
    "Classification",
    "EffectsRow",
    "ExternalSource",
    "GapReason",
    "GrantEnd",
    "GrantRow",
    "ReportRow",
    "ReportSummary",
    "SettledBy",
    "StoppedRow",
    "typed",
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


NO_SESSION = "(no session)"
"""The key of ``ReportSummary.by_session`` for records that name no pi session."""

OPERATOR_DECLINES: frozenset[str] = frozenset({"declined", "timeout"})
"""Reasons of a ``confirmation.declined`` that are the operator's answer; the rest are blocks."""


class StoppedRow(_Wire):
    """One call that did not run: a ``confirmation.declined`` record (see the docstring).

    ``outcome``: ``declined`` (the operator's No or no answer), ``stopped`` (the operator's
    "No, and stop the agent": the call asked and every other call of that turn, queued or
    not yet asked) or ``blocked`` (the guard).
    """

    seq: int
    ts: str
    tool_call_id: str | None
    tool_name: str
    action_kind: Literal["local-safe", "destructive", "protected"]
    path: str | None
    payload_hash: str
    outcome: Literal["declined", "blocked", "stopped"]
    reason: str
    delivered_late: bool
    occurred_at_iso: str | None
    preview: str | None = None
    session: str | None = None


SettledBy = Literal[
    "operator", "timeout", "no-ui", "sidecar-restart", "user-rule", "call-approved", "nothing-lost"
]
"""Who settled an effects review (see :class:`EffectsRow`)."""


class EffectsRow(_Wire):
    """One agent command's effects review (an ``effects.reviewed`` that changed something)
    and how it was settled (see :mod:`audit._reporting.effects`).

    ``outcome``: ``applied``, ``discarded`` or ``held`` (no answer in the log yet); ``by``:
    ``operator`` (on the screen ``approver`` names), ``timeout``, ``no-ui``,
    ``sidecar-restart`` (a discard nobody answered), or for what was applied at once without
    holding anything: ``user-rule``, ``call-approved`` (the operator's yes to the call) or
    ``nothing-lost`` (the review's own rules). ``heldPaths``: what was held (``kind path
    (reason)``, at most 64; ``heldTotal`` counts them all); ``command``: the call's preview.
    """

    seq: int
    ts: str
    layer: str
    tool_call_id: str | None
    session: str | None
    command: str | None
    outcome: Literal["applied", "discarded", "held"]
    by: SettledBy | None
    approver: Approver | None
    held: bool
    held_total: int
    held_paths: tuple[str, ...]
    counts: dict[str, int]
    evidence_id: str | None
    resolved_seq: int | None


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
    stopped: int = 0
    """Calls of a turn the operator stopped ("No, and stop the agent"): none of them ran."""
    blocked: int = 0
    blocked_by_reason: dict[str, int] = {}
    delivered_late: int = 0
    allowed_by_rule: int = 0
    allowed_by_rule_id: dict[str, int] = {}
    ran_unasked: int = 0
    """Destructive calls that ran without a dialog, every target restorable (never gaps)."""
    ran_unasked_by_reason: dict[str, int] = {}
    """Their targets by why each was restorable: missing, regenerable, ignored, clean."""
    by_session: dict[str, dict[str, int]] = {}
    covered_by_grant: int = 0
    by_grant: dict[str, int] = {}
    operator_signed: int = 0
    """Confirmations whose evidence the operator's own authenticator signed (a passkey)."""
    rejected_by_reason: dict[str, int] = {}
    """Every ``evidence.rejected`` of the log, by reason: why consumers refused evidence."""
    effects_reviewed: int = 0
    """Agent commands whose effects review found a change (see ``AuditReport.effects``)."""
    effects_held: int = 0
    """Of those, the ones that held work for the operator."""
    effects_by_outcome: dict[str, int] = {}
    """``applied``/``discarded``/``held`` and by whom: ``applied by operator``, ``discarded
    by timeout``, ``applied by nothing-lost`` …"""


class AuditReport(_Wire):
    """``decision`` is ``no-gaps`` or ``gaps``; :attr:`exit_code` is 0 or 5."""

    decision: Literal["no-gaps", "gaps"]
    summary: ReportSummary
    rows: tuple[ReportRow, ...]
    external: tuple[ExternalSource, ...] = ()
    stopped: tuple[StoppedRow, ...] = ()
    allowed: tuple[AllowedRow, ...] = ()
    grants: tuple[GrantRow, ...] = ()
    effects: tuple[EffectsRow, ...] = ()

    @property
    def exit_code(self) -> int:
        return 0 if self.decision == "no-gaps" else 5


_M = TypeVar("_M", bound=BaseModel)


def typed(record: AuditRecord, model: type[_M]) -> _M:
    """``record``'s data as ``model``; :class:`audit.RecordDataError` when it is not one."""
    try:
        return model.model_validate(record.data)
    except ValidationError:
        raise RecordDataError(record.seq, record.event) from None
