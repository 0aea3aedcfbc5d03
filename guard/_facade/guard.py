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
from typing import TYPE_CHECKING, Any, Unpack

from audit.verify import VerifyResult
from audit.wire import AuditRecord
from guard._approvals import Approver
from guard._effects import UnaskedTarget
from guard._evidence import (
    ConsumeResult,
    Evaluation,
    Keyring,
    PublicKeyring,
    RecordResult,
)
from guard._facade.calls import Calls, RecordOptions
from guard._facade.consumer import ClassifiedCall
from guard._facade.consumption import Consumption
from guard._facade.core import Core
from guard._facade.effects import Effects
from guard._facade.fields import BlockReason, DeclineReason, LateDeclineReason, operator_reason_text
from guard._facade.grants import Grants
from guard._facade.ledger import LEDGER_FILE
from guard._facade.operators import Operators
from guard._facade.outcomes import Late, Outcomes
from guard._facade.planners import Planners
from guard._facade.sessions import Sessions
from guard._facade.spool import Spool
from guard._home import AUDIT_LOG_FILE

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
    and ended, refusals), :attr:`spool` (the shim's spooled events), :attr:`consumption`
    (evidence consumed, audited) and :attr:`planners`. This class builds them and keeps the
    verbs of a call's life (classify, evaluate, record, decline, blocked, tool_executed,
    input_changed, consume), each handed to its collaborator, and the core's state.
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
        self.consumption = Consumption(core)
        self.planners = Planners(core)

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
        **options: Unpack[RecordOptions],
    ) -> RecordResult:
        """Record the operator's answer about a call; a yes mints signed evidence
        (:meth:`Calls.record`, the fingerprint computed from the call itself)."""
        return self.calls.record(tool_name, tool_input, cwd, confirmed=confirmed, **options)

    def record_call(
        self, call: ClassifiedCall, *, confirmed: bool, **options: Unpack[RecordOptions]
    ) -> RecordResult:
        """Record the operator's answer about a classified call: :meth:`Calls.record_call`."""
        return self.calls.record_call(call, confirmed=confirmed, **options)

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

    # -- consume, planners, the home as a whole (``consumption``, ``planners``, ``core``) --

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
        """Check ``envelope`` against the pending call (recomputed here), consume it once and
        audit the result: :meth:`Consumption.consume`."""
        return self.consumption.consume(
            envelope,
            tool_name,
            tool_input,
            cwd,
            tool_call_id=tool_call_id,
            call_checked_elsewhere=call_checked_elsewhere,
            require_dialog=require_dialog,
            require_operator_signature=require_operator_signature,
        )

    def plan(self, planner: str, params: Mapping[str, Any] | str | bytes) -> PlanResult:
        """Run a read-only planner and audit it: :meth:`Planners.run`."""
        return self.planners.run(planner, params)

    def verify_audit(self, *, allow_unanchored: bool = False) -> VerifyResult:
        """Verify the home's audit log: :meth:`Core.verify_audit`."""
        return self.core.verify_audit(allow_unanchored=allow_unanchored)

    def status(self) -> dict[str, Any]:
        """The home, its key, log and ledger: :meth:`Core.status`."""
        return self.core.status()

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
