"""``pi-guard serve``: the guard's JSON-RPC 2.0 sidecar, one JSON object per LF-terminated line.

The pi extension shim starts this process once per session and asks it everything: every
decision (classify, what the dialog says, why a call is blocked) is made here, in Python,
by the :class:`~guard.Guard` facade; the sidecar is the adapter from the wire to it.
Framing and messages are in ``framing``, request handling in ``server``, the wire shapes in
``wire`` and the text people read in ``text``; the methods are parts, one concern each
(``calls``, ``effects``, ``sandbox``, ``desk``, ``status``, on the shared ``state``). This
module is :class:`Sidecar`, which composes them into the method table, and :func:`serve`.
Its ``__all__`` re-exports the protocol names.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from audit import AuditError, LogIntegrityError
from guard._approvals import ApprovalBroker, Approver, LocalApprovals
from guard._effects import Baseline, Reviewer, UnaskedTarget
from guard._errors import GuardError, RpcFault
from guard._facade import REPLAY_SKEW, Guard, Monitor
from guard._grants import GrantOffer
from guard._home import LAYERS_DIR, SESSIONS_DIR, resolve_home
from guard._logging import defer_logging, get_logger, logging_configured
from guard._pi import session_envelopes
from guard._sandbox import SandboxPlan
from guard._sidecar.framing import (
    MAX_LINE_BYTES,
    Frame,
    LineSplitter,
    RpcCode,
    decode_request,
    encode_message,
    error_response,
    iter_frames,
)
from guard._sidecar.handlers.calls import CallsPart
from guard._sidecar.handlers.effects import EffectsPart
from guard._sidecar.handlers.state import open_problem
from guard._sidecar.handlers.status import PROTOCOL, StatusPart
from guard._sidecar.network import SessionNetwork
from guard._sidecar.server import Method, answer_stream, install_sigterm
from guard._sidecar.text import PLANNER_TOOL_NAME
from guard._sidecar.wire import (
    ApprovalAnswerParams,
    ApprovalPollParams,
    ConsumeParams,
    DeclinedParams,
    EffectsResolveParams,
    EffectsReviewParams,
    EvaluateParams,
    GrantsRevokeParams,
    NoParams,
    PlanParams,
    RecordParams,
    ReplayParams,
    SandboxPlanParams,
    StatusParams,
    ToolExecutedParams,
    VerifyParams,
)

if TYPE_CHECKING:
    from guard._approvals import ApprovalPage  # the page's HTTP server: only if asked for
    from guard._telemetry import Telemetry, TelemetryOff

__all__ = [
    "MAX_LINE_BYTES",
    "PLANNER_TOOL_NAME",
    "PROTOCOL",
    "REPLAY_SKEW",
    "Frame",
    "LineSplitter",
    "RpcCode",
    "Sidecar",
    "decode_request",
    "encode_message",
    "error_response",
    "iter_frames",
    "serve",
    "session_envelopes",
]

_log = get_logger("guard.sidecar")


class Sidecar(CallsPart, EffectsPart, StatusPart):
    """The guard's method table (request handling is :class:`RpcServer`'s); see :func:`serve`."""

    def __init__(self, home: Path | None, *, verify_only: bool = False) -> None:
        self.started = time.monotonic()
        self.home = resolve_home(home)
        self._guard: Guard | None = None
        self._monitor: Monitor | None = None
        self._open_error: str | None = None
        self._open_reason = "guard-open-failed"
        self._open_problem: tuple[str, str] | None = None
        # The log did not verify (at open or later): nothing more is signed over it.
        self._damage: LogIntegrityError | None = None
        self._sandbox: SandboxPlan | None = None
        # This sidecar's command layers (guard/_effects), and the targets each call's yes
        # named, resolved when the operator answered.
        self._session_dir = self.home / SESSIONS_DIR / f"s{os.getpid()}-{secrets.token_hex(4)}"
        self._layers = self._session_dir / LAYERS_DIR
        self._reviewer = Reviewer(self._layers)
        self._approved: dict[str, tuple[str, ...]] = {}
        # The calls the operator said yes to in a dialog: the history their command rewrites
        # in .git is what they said yes to (a grant or an allow rule never covers it).
        self._answered: set[str] = set()
        # What the operator had when the session started (the effects review judges
        # "ignored" against it, never against ignore files an agent command wrote).
        self._baseline: Baseline | None = None
        # The user's [sandbox] ask and regenerable (read at sandbox.plan), and why each call
        # that ran without a dialog could: its targets, restorable against the baseline.
        self._quiet: tuple[str, tuple[str, ...]] = ("every", ())
        self._unasked: dict[str, tuple[UnaskedTarget, ...]] = {}
        # The grants each asked call's dialog offered (by tool call id): a grant chosen is
        # derived again and kept only if it is still the one shown.
        self._offered: dict[str, tuple[GrantOffer, ...]] = {}
        self._sandbox_params: SandboxPlanParams | None = None
        self._sandbox_stamp: tuple[tuple[str, bool, bool], ...] = ()
        self._network = SessionNetwork()
        # The approval port: every question offered to every screen (the pi dialog, a second
        # terminal); refusals heard on the listener's thread are audited on this one.
        self._broker = ApprovalBroker()
        self._local: LocalApprovals | None = None
        self._page: ApprovalPage | None = None
        self._refused: dict[tuple[str, Approver, str | None], int] = {}
        self._refused_lock = threading.Lock()
        self._telemetry: Telemetry | None = None
        self._telemetry_off: TelemetryOff | None = None
        try:
            if verify_only:
                self._monitor = Monitor.open(self.home)
            else:
                self._guard = Guard.open(self.home)
                self._start_telemetry()
                self._anchor("session-start")
                self._settle_old_layers()
                self._start_local()
        except (GuardError, AuditError, OSError) as exc:
            # Keep serving: every call then gets a clear error and the shim fails closed.
            self._open_error = f"{type(exc).__name__}: {exc}"
            # A log that does not verify is named as such: the guard refuses to extend it.
            self._open_reason = (
                "audit-integrity" if isinstance(exc, LogIntegrityError) else "guard-open-failed"
            )
            if isinstance(exc, LogIntegrityError):
                self._damage = exc
            self._open_problem = open_problem(self.home, exc)
            _log.error("guard-open-failed", home=str(self.home), error=self._open_error)
        methods = {
            "describe": Method(NoParams, self._describe, True),
            "health": Method(NoParams, self._health, True),
            "ping": Method(NoParams, self._ping, True),
            "status": Method(StatusParams, self._status, False),
            "evaluate": Method(EvaluateParams, self._evaluate, False),
            "record": Method(RecordParams, self._record, False),
            "audit.declined": Method(DeclinedParams, self._declined, False),
            "consume": Method(ConsumeParams, self._consume, True),
            "plan": Method(PlanParams, self._plan, False),
            "audit.toolExecuted": Method(ToolExecutedParams, self._tool_executed, False),
            "audit.replay": Method(ReplayParams, self._replay, False),
            "audit.verify": Method(VerifyParams, self._verify, True),
            "sandbox.plan": Method(SandboxPlanParams, self._sandbox_plan, False),
            "effects.review": Method(EffectsReviewParams, self._effects_review, False),
            "effects.resolve": Method(EffectsResolveParams, self._effects_resolve, False),
            "grants.list": Method(NoParams, self._grants_list, False),
            "approvals.poll": Method(ApprovalPollParams, self._approvals_poll, False),
            "approvals.answer": Method(ApprovalAnswerParams, self._approvals_answer, False),
            "grants.revoke": Method(GrantsRevokeParams, self._grants_revoke, False),
        }
        super().__init__(methods, verify_only=verify_only)

    def _call(self, name: str, raw_params: Any) -> Any:
        try:
            return super()._call(name, raw_params)
        except RpcFault as fault:
            if fault.data.get("reason") == "audit-integrity" and self._damage is None:
                self._note_damage()
            raise

    def close(self) -> None:
        # A sidecar that stops approves nothing: every open question is withdrawn.
        for asked in self._broker.withdraw_all("sidecar-stopped"):
            _log.info("approval-withdrawn", id=asked.pending.id, tool=asked.pending.tool_name)
        if self._local is not None:
            self._local.close()
        if self._page is not None:
            self._page.close()
        self._audit_refused()
        self._audit_network()
        self._network.close()
        if self._guard is not None:
            # The session ends: what still waits for the operator is discarded (audited,
            # unless the log is damaged: nothing is signed over it), its /tmp and layers go.
            if self._damage is None:
                self._discard_held(self._reviewer, "session-end")
                if self._guard.session is not None:
                    with contextlib.suppress(GuardError, AuditError, OSError):
                        self._guard.session_ended("shutdown")
            self._stop_telemetry()
            shutil.rmtree(self._session_dir, ignore_errors=True)
            if self._damage is None:
                self._anchor("session-end")
            self._guard.close()
        if self._monitor is not None:
            self._monitor.close()


# -- the loop ----------------------------------------------------------------------------------


def serve(
    stdin: BinaryIO, stdout: BinaryIO, *, home: Path | None, verify_only: bool = False
) -> int:
    """Run the JSON-RPC loop until EOF on ``stdin`` (or SIGTERM). Returns the exit code (0)."""
    if not logging_configured():
        defer_logging()  # stdout is the JSON-RPC stream: logs must go to stderr
    restore = install_sigterm()
    sidecar = Sidecar(home, verify_only=verify_only)
    _log.info("sidecar-started", pid=os.getpid(), home=str(sidecar.home), verify_only=verify_only)
    try:
        answer_stream(sidecar, stdin, stdout)
    finally:
        sidecar.close()
        restore()
        _log.info("sidecar-stopped", requests=sidecar.requests)
    return 0
