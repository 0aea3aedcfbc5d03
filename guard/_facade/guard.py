"""The Python facade: one object that evaluates, records, consumes and audits.

    with Guard.open(home) as g:
        call = {"command": "rm -rf build"}
        g.evaluate("bash", call, cwd).requires_confirmation      # True
        rec = g.record("bash", call, cwd, confirmed=True)        # signed envelope
        g.consume(rec.envelope.model_dump(mode="json"), "bash", call, cwd).decision
        # "consumed" once, then "rejected" (replay)

Every result is report-only: nothing here authorizes or dispatches anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from audit.verify import VerifyResult, verify_log
from audit.wire import (
    AuditRecord,
    EvidenceConsumedData,
    EvidenceRejectedData,
    Origin,
    PlannerReportedData,
)
from guard._approvals import Approver
from guard._effects import UnaskedTarget
from guard._evidence import (
    DEFAULT_SKEW,
    DEFAULT_TTL_SECONDS,
    MAX_TTL_SECONDS,
    ConsumeResult,
    CoveredBy,
    Evaluation,
    Keyring,
    PublicKeyring,
    RecordResult,
    Reservation,
    normalize_tool_name,
)
from guard._facade.calls import Calls
from guard._facade.consumer import ClassifiedCall, consume_call
from guard._facade.core import Core
from guard._facade.effects import Effects
from guard._facade.fields import (
    BlockReason,
    DeclineReason,
    LateDeclineReason,
    fingerprint_fields,
    operator_reason_text,
)
from guard._facade.grants import Grants
from guard._facade.ledger import LEDGER_FILE
from guard._facade.operators import Operators
from guard._facade.outcomes import Late, Outcomes
from guard._facade.sessions import Sessions
from guard._facade.spool import Spool
from guard._home import AUDIT_LOG_FILE
from guard._operator import OperatorSignature

if TYPE_CHECKING:
    from planning import PlanResult

__all__ = [
    "AUDIT_LOG_FILE",
    "LEDGER_FILE",
    "BlockReason",
    "DeclineReason",
    "Guard",
    "LateDeclineReason",
    "operator_reason_text",
]


class Guard:
    """Keys, ledger and audit log of one guard home. Use :meth:`open`; close when done.

    Made of collaborators built here, each given the one shared :class:`Core` (key, audit
    log, ledger, policy, the session records name): :attr:`calls` (evaluate, record),
    :attr:`outcomes` (what became of a call), :attr:`grants`, :attr:`operators` (passkeys),
    :attr:`effects` (the effects review's records), :attr:`sessions` (a pi session started
    and ended, refusals) and :attr:`spool` (the shim's spooled events). This class keeps the
    verbs of a call's life (classify, evaluate, record, decline, blocked, tool_executed,
    input_changed, consume), opening a home, planners and verifying the log.
    """

    def __init__(self, core: Core) -> None:
        self.core = core
        self.home = core.home
        self.audit = core.audit
        self.ledger = core.ledger
        self.classifier = core.classifier
        self.calls = Calls(core)
        self.outcomes = Outcomes(core, self.calls)
        self.grants = Grants(core, self.calls)
        self.operators = Operators(core, self.calls)
        self.effects = Effects(core)
        self.sessions = Sessions(core, self.grants)
        self.spool = Spool(core, self.outcomes)

    @classmethod
    def open(
        cls, home: str | os.PathLike[str] | None = None, *, preview: bool | None = None
    ) -> Guard:
        """Open (creating on first use) the guard home (:meth:`Core.open`): key, keyring,
        ledger, audit log; ``preview``: whether records carry a redacted preview."""
        return cls(Core.open(home, preview=preview))

    # -- the core's state --------------------------------------------------

    @property
    def key_id(self) -> str:
        return self.core.key_id

    @property
    def key_created(self) -> bool:
        """Whether :meth:`open` made this home's first key."""
        return self.core.key_created

    @property
    def session(self) -> dict[str, Any] | None:
        """The pi session every record names (:meth:`attribute`), or ``None``."""
        return self.core.session

    @property
    def session_counts(self) -> dict[str, int]:
        """What happened in that session so far (``/guard``, ``session.ended``)."""
        return self.core.session_counts

    @property
    def observer(self) -> Callable[[AuditRecord], None] | None:
        """Sees every record once it is durable; it must neither raise nor wait."""
        return self.core.observer

    @observer.setter
    def observer(self, observer: Callable[[AuditRecord], None] | None) -> None:
        self.core.observer = observer

    def attribute(self, session_id: str | None, session_file: str | None = None) -> None:
        """Every record appended from now on names pi's session ``session_id`` (see
        :meth:`Core.attribute`); ``None`` stops naming one."""
        self.core.attribute(session_id, session_file)

    def keyring(self) -> Keyring:
        """The public keyring as stored: what an auditor or monitor needs."""
        return self.core.keyring()

    def public_keyring(self) -> PublicKeyring:
        return self.core.public_keyring()

    def rotate_key(self) -> tuple[str, str]:
        """Retire the active key, install a new one, audit it. Returns ``(old, new)`` key ids."""
        return self.core.rotate_key()

    # -- a call's life: judged, answered, ended (``calls``, ``outcomes``) ----

    def classify(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> ClassifiedCall:
        """Judge a pending call once: :meth:`Calls.classify`."""
        return self.calls.classify(tool_name, tool_input, cwd)

    def evaluate(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> Evaluation:
        """Classify a pending call and, unless it is local-safe, compute its fingerprint."""
        return self.calls.evaluate(tool_name, tool_input, cwd)

    def evaluate_call(self, call: ClassifiedCall) -> Evaluation:
        """What the guard thinks of a call it has classified: :meth:`Calls.evaluate_call`."""
        return self.calls.evaluate_call(call)

    def record(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        confirmed: bool,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
        origin: Origin = "operator-contract-review",
        decline_reason: DeclineReason = "declined",
        operator_reason: str | None = None,
        covered_by: CoveredBy | None = None,
        approver: Approver | None = None,
        signed: tuple[Reservation, OperatorSignature] | None = None,
    ) -> RecordResult:
        """Record the operator's answer about a call; a yes mints signed evidence
        (:meth:`Calls.record`, the fingerprint computed from the call itself)."""
        return self.calls.record(
            tool_name,
            tool_input,
            cwd,
            confirmed=confirmed,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            origin=origin,
            decline_reason=decline_reason,
            operator_reason=operator_reason,
            covered_by=covered_by,
            approver=approver,
            signed=signed,
        )

    def record_call(
        self,
        call: ClassifiedCall,
        *,
        confirmed: bool,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
        origin: Origin = "operator-contract-review",
        decline_reason: DeclineReason = "declined",
        operator_reason: str | None = None,
        covered_by: CoveredBy | None = None,
        approver: Approver | None = None,
        signed: tuple[Reservation, OperatorSignature] | None = None,
    ) -> RecordResult:
        """Record the operator's answer about a classified call: :meth:`Calls.record_call`."""
        return self.calls.record_call(
            call,
            confirmed=confirmed,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            origin=origin,
            decline_reason=decline_reason,
            operator_reason=operator_reason,
            covered_by=covered_by,
            approver=approver,
            signed=signed,
        )

    def decline(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        reason: DeclineReason,
        *,
        tool_call_id: str | None = None,
        operator_reason: str | None = None,
        approver: Approver | None = None,
    ) -> tuple[Evaluation, RecordResult]:
        """Audit the operator's (or the shim's) no to a call: :meth:`Outcomes.decline`."""
        return self.outcomes.decline(
            tool_name,
            tool_input,
            cwd,
            reason,
            tool_call_id=tool_call_id,
            operator_reason=operator_reason,
            approver=approver,
        )

    def blocked(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        reason: BlockReason,
        *,
        tool_call_id: str | None = None,
        late: Late | None = None,
    ) -> None:
        """Audit a call the guard stopped without asking: :meth:`Outcomes.blocked`."""
        self.outcomes.blocked(
            tool_name, tool_input, cwd, reason, tool_call_id=tool_call_id, late=late
        )

    def input_changed(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        late: Late | None = None,
    ) -> None:
        """Audit a call refused at execution because its input is not the one judged:
        :meth:`Outcomes.input_changed`."""
        self.outcomes.input_changed(
            tool_name, tool_input, cwd, tool_call_id=tool_call_id, late=late
        )

    def tool_executed(
        self,
        tool_call_id: str,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        is_error: bool,
        evidence_id: str | None = None,
        *,
        late: Late | None = None,
        unasked: Sequence[UnaskedTarget] | None = None,
    ) -> None:
        """Audit that a call ran, as executed: :meth:`Outcomes.tool_executed`."""
        self.outcomes.tool_executed(
            tool_call_id,
            tool_name,
            tool_input,
            cwd,
            is_error,
            evidence_id,
            late=late,
            unasked=unasked,
        )

    # -- consume ----------------------------------------------------------

    def consume(
        self,
        envelope: Mapping[str, Any] | str | bytes | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        call_checked_elsewhere: bool = False,
        require_dialog: bool = False,
        require_operator_signature: bool = False,
    ) -> ConsumeResult:
        """Check ``envelope`` against the pending call (recomputed here) and consume it once.

        ``tool_call_id``: the pending call's id; evidence bound to another call is rejected
        (``tool-call-id-mismatch``), and evidence bound to a call is rejected without it
        (``call-id-required``) unless ``call_checked_elsewhere=True`` says the consumer ties
        the evidence to the call itself. ``require_dialog``: evidence
        a scoped grant covered (``origin: runtime-grant``) is rejected (``not-dialog`` /
        ``grant-covered``) and not consumed, so a consumer that accepts grants still can.
        ``require_operator_signature`` (or the user's ``[evidence]
        require_operator_signature``): evidence without the operator's own signature is
        rejected (``not-operator-signed`` / ``no-operator-signature``) and not consumed.

        The ledger is first brought up to date from the audit log's ``evidence.consumed``
        records (a lost or stale ledger never forgets); if the log cannot be read or
        verified this raises :class:`LedgerError` and nothing is consumed.
        """
        result, pending = consume_call(
            envelope,
            tool_name,
            tool_input,
            cwd,
            classifier=self.core.classifier,
            keyring=self.public_keyring(),
            ledger=self.ledger,
            log_path=self.audit.path,
            require_log=True,
            tool_call_id=tool_call_id,
            call_checked_elsewhere=call_checked_elsewhere,
            require_dialog=require_dialog,
            require_operator_signature=require_operator_signature,
        )
        fields = {
            "tool_name": normalize_tool_name(tool_name),
            "tool_call_id": tool_call_id,
            "evidence_id": result.evidence_id or None,
            **fingerprint_fields(pending),
        }
        if result.decision == "consumed":
            self.core.append(EvidenceConsumedData(**fields))
        else:
            self.core.append(
                EvidenceRejectedData(
                    decision=result.match.decision, reasons=list(result.reasons), **fields
                )
            )
        return result

    # -- planner ----------------------------------------------------------

    def plan(self, planner: str, params: Mapping[str, Any] | str | bytes) -> PlanResult:
        """Run a read-only planner and audit ``planner.reported``. Raises ``PlanInputError``.

        ``params`` is a mapping or JSON text, decoded strictly (:func:`audit.load_json`).
        """
        # The planners (their models built at import) load with the first plan, not per guard.
        from guard._facade.plan import plan_input
        from planning import PLANNERS

        inp = plan_input(planner, params)
        result = PLANNERS[planner].run(inp)
        self.core.append(
            PlannerReportedData(
                planner=planner, decision=result.decision, reasons=list(result.reasons)
            )
        )
        return result

    # -- audit ------------------------------------------------------------

    def verify_audit(self, *, allow_unanchored: bool = False) -> VerifyResult:
        return verify_log(
            self.audit.path, self.public_keyring().public_keys(), allow_unanchored=allow_unanchored
        )

    def status(self) -> dict[str, Any]:
        return {
            "home": str(self.home),
            "keyId": self.key_id,
            "auditLog": str(self.audit.path),
            "consumedIds": self.ledger.count(),
            "skewSeconds": int(DEFAULT_SKEW.total_seconds()),
            "maxTtlSeconds": MAX_TTL_SECONDS,
        }

    def close(self) -> None:
        self.core.close()

    def __enter__(self) -> Guard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
