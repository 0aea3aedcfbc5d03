"""``pi-guard serve``: the guard's JSON-RPC 2.0 sidecar, one JSON object per LF-terminated line.

The pi extension shim starts this process once per session and asks it everything: every
decision (classify, what the dialog says, why a call is blocked) is made here, in Python.
Framing and messages are in ``framing``, request handling in ``server``, the wire shapes in
``wire`` and the text people read in ``text``; this module is the methods and
:func:`serve`. Its ``__all__`` re-exports the protocol names.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, BinaryIO, Literal

import structlog
from pydantic import TypeAdapter, ValidationError

from audit import AuditError, LogIntegrityError, parse_iso, utc_now
from guard._anchors import anchor_checkpoint, anchor_dir
from guard._approvals import (
    Answer,
    AnswerRequest,
    ApprovalBroker,
    Approver,
    Asked,
    LocalApprovals,
    Signable,
    question_digest,
)
from guard._approvals.web import ApprovalPage, enrolled_port
from guard._effects import Reviewer
from guard._errors import GuardError, RpcFault, StateError
from guard._evidence.fingerprint import Fingerprint
from guard._evidence.models import Evaluation
from guard._grants import GrantOffer
from guard._grants.store import GrantRecord
from guard._guard import Guard, operator_reason_text
from guard._home import LAYERS_DIR, SESSION_TMP_DIR, SESSIONS_DIR, resolve_home
from guard._logging import configure_logging, get_logger
from guard._monitor import Monitor
from guard._pi.session import session_envelopes
from guard._policy.matching.classify import pi_file_target
from guard._policy.settings.surroundings import note_pi_runtime
from guard._sandbox import SandboxPlan, workspace_stamp
from guard._sandbox import plan as sandbox_plan
from guard._sandbox.explain import explain_network, explain_output
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
from guard._sidecar.network import SessionNetwork
from guard._sidecar.runtime import fill_runtime_facts
from guard._sidecar.server import Method, RpcServer, answer_stream, install_sigterm
from guard._sidecar.text import (
    NO_SANDBOX_YET,
    PLANNER_TOOL_NAME,
    block_reason_for,
    dialog_for,
    effects_dialog,
    effects_note,
    grant_choice,
    grant_line,
    input_changed_reason,
    planner_tools,
    runtime_note,
    sandbox_block_reason,
    sandbox_line,
    sandbox_notice,
    session_counts_line,
    status_audit_damaged,
    status_home_unusable,
    status_on,
    wait_notice,
)
from guard._sidecar.wire import (
    ApprovalAnswerParams,
    ApprovalPollParams,
    ApprovalRef,
    ConsumeParams,
    DeclinedParams,
    DeclinedReply,
    Dialog,
    EffectsResolveParams,
    EffectsResolveReply,
    EffectsReviewParams,
    EffectsReviewReply,
    EvaluateParams,
    EvaluateReply,
    GrantNote,
    GrantsRevokeParams,
    JudgedFile,
    NoParams,
    PlanParams,
    RecordParams,
    RecordReply,
    ReplayParams,
    ReplayRejected,
    ReplayReply,
    SandboxPlanParams,
    SandboxPlanReply,
    SpooledDecline,
    SpooledEvent,
    ToolExecutedParams,
    VerifyParams,
)

__all__ = [
    "MAX_LINE_BYTES",
    "PLANNER_TOOL_NAME",
    "PROTOCOL",
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

PROTOCOL = "pi-operator-guard/sidecar/v1"
# A spooled event's time may run ahead of this clock by at most this much (same machine).
REPLAY_SKEW = timedelta(minutes=10)
_SPOOLED: TypeAdapter[SpooledEvent] = TypeAdapter(SpooledEvent)
_log = get_logger("guard.sidecar")


def _open_problem(home: Path, exc: Exception) -> tuple[str, str]:
    """Which file could not be used and why (the OS error where there is one)."""
    if isinstance(exc, StateError):
        return exc.path, exc.problem
    if isinstance(exc, OSError):
        return str(exc.filename or home), exc.strerror or str(exc)
    return str(home), str(exc)


# -- the backend: a full guard, or verify-only (public keyring, no signing key) ----------------


class Sidecar(RpcServer):
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
        self._refused: list[tuple[str, Approver, str | None]] = []
        self._refused_lock = threading.Lock()
        try:
            if verify_only:
                self._monitor = Monitor.open(self.home)
            else:
                self._guard = Guard.open(self.home)
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
            self._open_problem = _open_problem(self.home, exc)
            _log.error("guard-open-failed", home=str(self.home), error=self._open_error)
        methods = {
            "describe": Method(NoParams, self._describe, True),
            "health": Method(NoParams, self._health, True),
            "ping": Method(NoParams, self._ping, True),
            "status": Method(NoParams, self._status, False),
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

    def _note_damage(self) -> None:
        """A call found the log damaged while this sidecar runs: from now on every call is
        refused for it, and the footer says so (the shim asks ``health`` again)."""
        if self._guard is None:
            return
        try:
            self._guard.audit.check()
        except LogIntegrityError as exc:
            self._damage = exc
            self._open_error = f"{type(exc).__name__}: {exc}"
            self._open_reason = "audit-integrity"
            _log.error("audit-integrity", home=str(self.home), error=self._open_error)
        except AuditError:
            return

    def _settle_old_layers(self) -> None:
        """Finish what a crash left half applied, in every sidecar's layers; what a sidecar
        that is gone still held is discarded (a restart never applies anything), audited."""
        root = self.home / SESSIONS_DIR
        if not root.is_dir() or self._guard is None:
            return
        for session in sorted(p for p in root.iterdir() if p.is_dir()):
            reviewer = Reviewer(session / LAYERS_DIR)
            reviewer.recover()
            if _alive(session.name):
                continue
            self._discard_held(reviewer, "sidecar-restart")
            shutil.rmtree(session, ignore_errors=True)

    def _discard_held(self, reviewer: Reviewer, reason: str) -> None:
        """Discard every held layer of ``reviewer``, each audited with ``reason``."""
        if self._guard is None:
            return
        for layer in reviewer.held():
            try:
                held = reviewer.resolve(layer, apply=False)
            except GuardError:
                continue
            self._guard.record_effects(held, layer, "/", "", confirmed=False, reason=reason)

    def _anchor(self, when: str) -> None:
        """Keep the current checkpoint in the anchor directory, if one is configured.

        Never fails a call: an anchor that cannot be written is logged (and ``doctor``
        shows what is anchored).
        """
        directory = anchor_dir()
        if directory is None or self._guard is None:
            return
        try:
            written = anchor_checkpoint(
                directory, self._guard.audit.path, self._guard.public_keyring().public_keys()
            )
        except (GuardError, AuditError, OSError) as exc:
            _log.warning("anchor-failed", when=when, anchor=str(directory.path), error=str(exc))
            return
        _log.info("anchored", when=when, size=written.size, created=written.created)

    def _start_local(self) -> None:
        """Listen for a second terminal's answers (``pi-guard approvals``); never fails a
        start: without it the pi dialog is the one screen."""
        local = LocalApprovals(self._session_dir, self._broker, self._note_refused)
        try:
            local.start()
        except OSError as exc:
            _log.warning("approvals-local-failed", error=str(exc))
            return
        self._local = local

    def _start_page(self, workspace: str) -> None:
        """Serve the approval page with this session when the user's policy says so
        (``[approvals] page``); never fails a start (another session may hold the port: its
        page lists this session's questions too)."""
        if self._page is not None or self._guard is None:
            return
        settings = self._guard.classifier.policy_for(workspace).approvals
        if not settings.page:
            return
        # Without a port of its own, the page serves where an enrolled passkey signs.
        port = settings.port or enrolled_port(self.home) or 0
        page = ApprovalPage(
            self.home,
            port=port,
            on_refused=lambda why, ident: self._note_refused(why, ident or "", "web"),
        )
        try:
            page.start()
        except OSError as exc:
            _log.warning("approvals-page-failed", port=port, error=str(exc))
            return
        self._page = page

    def _note_refused(self, reason: str, approval_id: str, approver: Approver) -> None:
        with self._refused_lock:
            self._refused.append((reason, approver, approval_id or None))

    def _audit_refused(self) -> None:
        """Audit the answers the listener refused since the last call (on this thread)."""
        with self._refused_lock:
            taken, self._refused = self._refused, []
        if self._guard is None or self._damage is not None:
            return
        for reason, approver, approval_id in taken:
            self._guard.approval_refused(reason, approver, approval_id)

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
            shutil.rmtree(self._session_dir, ignore_errors=True)
            if self._damage is None:
                self._anchor("session-end")
            self._guard.close()
        if self._monitor is not None:
            self._monitor.close()

    # -- methods ---------------------------------------------------------------------------------

    def _status_line(self) -> str:
        """The footer text for this sidecar: on, or why the home or its log is unusable."""
        if self._damage is not None:
            return status_audit_damaged(self._damage.kind)
        if self._open_problem is not None:
            return status_home_unusable(*self._open_problem)
        page = self._page.url if self._page is not None else None
        return status_on(os.getpid(), self._sandbox.state if self._sandbox else None, page)

    def _need_guard(self) -> Guard:
        if self._guard is None or self._damage is not None:
            detail: dict[str, str] = {}
            if self._damage is not None:
                detail["detail"] = status_audit_damaged(self._damage.kind)
            elif self._open_problem is not None:
                path, problem = self._open_problem
                detail["detail"] = f"home unusable ({path}: {problem})"
            raise RpcFault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                self._open_reason,
                home=str(self.home),
                error=self._open_error,
                **detail,
            )
        return self._guard

    def _describe(self, _: NoParams) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            package_version = version("pi-operator-guard")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            package_version = "0"
        return {
            "name": "pi-operator-guard",
            "protocol": PROTOCOL,
            "version": package_version,
            "verifyOnly": self.verify_only,
            "maxLineBytes": MAX_LINE_BYTES,
            "methods": sorted(
                n for n, m in self.methods.items() if m.verify_only_ok or not self.verify_only
            ),
            "params": {n: m.params.model_json_schema() for n, m in sorted(self.methods.items())},
            "tools": [tool.model_dump(mode="json") for tool in planner_tools()],
        }

    def _ping(self, _: NoParams) -> dict[str, Any]:
        """A bare round trip: the baseline the benchmark compares the guard against."""
        return {"pong": True}

    def _health(self, _: NoParams) -> dict[str, Any]:
        key_id = None
        if self._guard is not None:
            with contextlib.suppress(GuardError):
                key_id = self._guard.key_id
        return {
            "ok": self._open_error is None and self._damage is None,
            "pid": os.getpid(),
            "uptimeSeconds": round(time.monotonic() - self.started, 3),
            "requests": self.requests,
            "verifyOnly": self.verify_only,
            "home": str(self.home),
            "keyId": key_id,
            "error": self._open_error,
            "statusText": self._status_line(),
        }

    def _status(self, _: NoParams) -> dict[str, Any]:
        guard = self._need_guard()
        status = dict(guard.status())
        verify = guard.verify_audit()
        intact = verify.decision == "intact"
        status["sidecar"] = {"pid": os.getpid(), "requests": self.requests}
        status["auditIntact"] = intact
        status["text"] = "\n".join(
            [
                "operator-guard status",
                f"  key:          {status.get('keyId')}",
                f"  home:         {status.get('home')}",
                f"  audit log:    {status.get('auditLog')}",
                f"  consumed ids: {status.get('consumedIds')}",
                f"  audit verify: {'intact' if intact else 'NOT INTACT'}",
                f"  sidecar pid:  {os.getpid()} ({self.requests} requests)",
                f"  sandbox:      {sandbox_line(self._sandbox)}",
                f"  this session: {session_counts_line(guard.session, guard.session_counts)}",
                *(
                    [f"  approvals:    {self._page.login_url} (one-time login)"]
                    if self._page is not None
                    else []
                ),
            ]
        )
        status["sessionCounts"] = dict(guard.session_counts)
        return status

    def _evaluate(self, p: EvaluateParams) -> dict[str, Any]:
        guard = self._need_guard()
        evaluation = guard.evaluate(p.tool_name, p.input, p.cwd)
        if evaluation.verdict != "allow":
            guard.audit.check()  # no dialog whose Yes could not be recorded
        reply: EvaluateReply
        if evaluation.verdict == "allow":
            reply = EvaluateReply(evaluation=evaluation, action="allow")
        elif evaluation.verdict == "block":
            guard.record(
                p.tool_name,
                p.input,
                p.cwd,
                confirmed=False,
                tool_call_id=p.tool_call_id,
                origin="runtime-ui-confirm",
            )
            reason = block_reason_for(
                "blocked-by-policy", evaluation, p.tool_name, tool_input=p.input
            )
            reply = EvaluateReply(
                evaluation=evaluation, action="block", block_reason=reason, audited=True
            )
        elif not p.has_ui and self._waits_headless(p.cwd):
            reply = self._asked_headless(p, evaluation)
        elif not p.has_ui:
            guard.record(
                p.tool_name,
                p.input,
                p.cwd,
                confirmed=False,
                tool_call_id=p.tool_call_id,
                origin="runtime-ui-confirm",
                decline_reason="no-ui",
            )
            reason = block_reason_for("no-ui", evaluation, p.tool_name, tool_input=p.input)
            reply = EvaluateReply(
                evaluation=evaluation, action="block", block_reason=reason, audited=True
            )
        else:
            reply = self._covered_or_asked(p, evaluation)
        if p.tool_name == "bash" and reply.action != "block":
            replanned = self._replanned()
            if replanned is not None:
                reply = reply.model_copy(update={"sandbox": replanned})
        target = pi_file_target(p.tool_name, p.input, p.cwd) if reply.action != "block" else None
        if target is not None:
            reply = reply.model_copy(update={"file": JudgedFile(path=target[0], real=target[1])})
        return reply.model_dump(mode="json")

    def _record(self, p: RecordParams) -> dict[str, Any]:
        guard = self._need_guard()
        asked = self._broker.result(p.approval_id) if p.approval_id is not None else None
        signed = asked.signed if asked is not None else None
        answer = self._settled(p.approval_id, yes=p.confirmed)
        approver = answer.approver if answer is not None else None
        # The question's winning answer says which grant, if any (any screen may choose one).
        chosen = answer.grant if p.approval_id is not None and answer is not None else p.grant
        if p.confirmed and p.tool_call_id is not None:
            self._approve(guard, p.tool_call_id, p.tool_name, p.input, p.cwd)
        shown = self._offered.pop(p.tool_call_id, ()) if p.tool_call_id else ()
        result = guard.record(
            p.tool_name,
            p.input,
            p.cwd,
            confirmed=p.confirmed,
            ttl_seconds=p.ttl_seconds,
            tool_call_id=p.tool_call_id,
            origin="runtime-ui-confirm",
            decline_reason=p.decline_reason,
            operator_reason=p.operator_reason,
            approver=approver,
            signed=signed if p.confirmed else None,
        )
        note: GrantNote | None = None
        if p.confirmed and chosen is not None and result.evidence_id is not None:
            workspace = self._workspace(p.cwd)
            now = guard.grant_offers(p.tool_name, p.input, p.cwd, workspace=workspace)
            # Derived again from the call: a grant is kept only if it is still the one shown.
            if chosen < len(shown) and now[chosen : chosen + 1] == shown[chosen : chosen + 1]:
                grant = guard.create_grant(shown[chosen], result.evidence_id, workspace=workspace)
                note = _grant_note(grant, uses=0)
        reply = RecordReply(**result.model_dump(), grant=note)
        return reply.model_dump(mode="json")

    def _approve(
        self, guard: Guard, tool_call_id: str, tool_name: str, tool_input: Any, cwd: str
    ) -> None:
        """What the operator (or a grant) said yes to, resolved now: the effects review holds
        what the command does beyond it (a link swapped in by a parallel call, say)."""
        targets = guard.evaluate(tool_name, tool_input, cwd).targets
        self._approved[tool_call_id] = tuple(os.path.realpath(t) for t in targets)

    def _workspace(self, cwd: str) -> str:
        """The session's workspace (its sandbox's), else the call's directory."""
        return self._sandbox.cwd if self._sandbox is not None else cwd

    def _covered_or_asked(self, p: EvaluateParams, evaluation: Evaluation) -> EvaluateReply:
        """A call the policy asks about: covered by a grant of this session (its own evidence,
        no dialog), or the dialog, with the grants it may offer."""
        guard = self._need_guard()
        workspace = self._workspace(p.cwd)
        covered = guard.covered(
            p.tool_name,
            p.input,
            p.cwd,
            workspace=workspace,
            ttl_seconds=p.ttl_seconds,
            tool_call_id=p.tool_call_id,
        )
        if covered is not None and covered.envelope is not None:
            details = covered.envelope.details
            assert details.covered_by is not None
            if p.tool_call_id is not None:
                self._approve(guard, p.tool_call_id, p.tool_name, p.input, p.cwd)
            note = next(
                (
                    _grant_note(s.record, uses=s.uses, use=details.covered_by.use)
                    for s in guard.grants.listed(utc_now())
                    if s.record.grant_id == details.covered_by.grant_id
                ),
                None,
            )
            return EvaluateReply(
                evaluation=evaluation, action="allow", record=covered, covered=note
            )
        offered = guard.grant_offers(p.tool_name, p.input, p.cwd, workspace=workspace)
        if p.tool_call_id is not None and offered:
            self._offered[p.tool_call_id] = offered
        limits = guard.grant_limits(workspace)
        until = utc_now() + timedelta(minutes=limits.max_minutes)
        dialog = dialog_for(
            evaluation,
            p.tool_name,
            ttl_seconds=p.ttl_seconds,
            confirm_timeout_ms=p.confirm_timeout_ms,
            tool_input=p.input,
            grants=[grant_choice(o, until=until, max_uses=limits.max_uses) for o in offered],
        )
        approval = self._open_question(p, evaluation, dialog)
        return EvaluateReply(
            evaluation=evaluation, action="confirm", dialog=dialog, approval=approval
        )

    def _waits_headless(self, cwd: str) -> bool:
        """Whether the user's policy keeps a call of a session without a UI waiting for an
        answer from another screen (``[approvals] headless = "wait"``)."""
        policy = self._need_guard().classifier.policy_for(self._workspace(cwd))
        return policy.approvals.headless == "wait"

    def _asked_headless(self, p: EvaluateParams, evaluation: Evaluation) -> EvaluateReply:
        """No UI, but the operator may answer elsewhere: the question is opened for the other
        screens only (no grant is offered), and the shim waits for its answer."""
        dialog = dialog_for(
            evaluation,
            p.tool_name,
            ttl_seconds=p.ttl_seconds,
            confirm_timeout_ms=p.confirm_timeout_ms,
            tool_input=p.input,
        )
        approval = self._open_question(p, evaluation, dialog)
        return EvaluateReply(
            evaluation=evaluation,
            action="wait",
            approval=approval,
            wait_notice=wait_notice(
                p.tool_name,
                approval.id,
                p.confirm_timeout_ms,
                self._page.login_url if self._page is not None else None,
            ),
        )

    def _open_question(
        self, p: EvaluateParams, evaluation: Evaluation, dialog: Dialog
    ) -> ApprovalRef:
        fp = evaluation.fingerprint
        fingerprint = fp.model_dump(mode="json") if fp is not None else None
        guard = self._need_guard()
        pending = self._broker.ask(
            kind="call",
            title=dialog.title,
            message=dialog.message,
            details=dialog.details,
            digest=question_digest(dialog.title, dialog.message, dialog.details, fingerprint),
            tool_name=p.tool_name,
            timeout_ms=p.confirm_timeout_ms,
            tool_call_id=p.tool_call_id,
            session_id=guard.session["id"] if guard.session is not None else None,
            grants=tuple(dialog.choices.grants),
            signable=self._signable(p, fp),
        )
        return ApprovalRef(id=pending.id, digest=pending.digest)

    def _signable(self, p: EvaluateParams, fp: Fingerprint | None) -> Signable | None:
        """What the page's passkey needs to sign a yes to this call (``None``: no
        authenticator is enrolled, so the page answers without one)."""
        guard = self._need_guard()
        operators = guard.public_keyring().operators
        if fp is None or not any(c.status == "active" for c in operators.values()):
            return None
        return Signable(fp, guard.key_id, p.ttl_seconds, p.tool_call_id, operators)

    def _approvals_poll(self, p: ApprovalPollParams) -> dict[str, Any]:
        """Whether another screen answered question ``id`` (the shim then closes its dialog)."""
        self._audit_refused()
        asked = self._broker.result(p.id)
        if asked is None:
            raise RpcFault(RpcCode.BAD_INPUT, "no such question", "unknown-approval")
        answer = asked.answer.model_dump(mode="json") if asked.answer is not None else None
        return {"open": asked.answer is None and asked.withdrawn is None, "answer": answer}

    def _approvals_answer(self, p: ApprovalAnswerParams) -> dict[str, Any]:
        """pi's dialog answered question ``id``: accepted if it is the first valid answer;
        either way the reply holds the answer that won."""
        self._audit_refused()
        request = AnswerRequest(
            id=p.id, digest=p.digest, decision=p.decision, reason=p.reason, grant=p.grant
        )
        outcome = self._broker.answer(request, "pi-dialog")
        if outcome != "accepted" and self._guard is not None and self._damage is None:
            self._guard.approval_refused(outcome, "pi-dialog", p.id)
        asked = self._broker.result(p.id)
        won = asked.answer if asked is not None else None
        return {"outcome": outcome, "answer": won.model_dump(mode="json") if won else None}

    def _settled(self, approval_id: str | None, *, yes: bool) -> Answer | None:
        """Close question ``approval_id`` and give the answer that won (who, and the grant
        chosen with a yes); a yes that no screen gave is refused (the call stays blocked)."""
        self._audit_refused()
        if approval_id is None:
            return None
        asked: Asked | None = self._broker.result(approval_id)
        answer = asked.answer if asked is not None else None
        if yes and (answer is None or answer.decision != "yes"):
            raise RpcFault(
                RpcCode.BAD_INPUT, "no screen answered yes to this question", "not-approved"
            )
        self._broker.close(approval_id)
        return answer

    def _grants_list(self, _: NoParams) -> dict[str, Any]:
        """The active grants of this session, for ``/guard grants``."""
        guard = self._need_guard()
        session = guard.session["id"] if guard.session is not None else None
        now = utc_now()
        notes = [
            _grant_note(s.record, uses=s.uses)
            for s in guard.grants.listed(now, session_id=session)
            if session is not None
        ]
        text = "\n".join(
            [
                "operator-guard grants of this session:"
                if notes
                else "operator-guard: no active grants in this session"
            ]
            + [grant_line(n, now) for n in notes]
        )
        return {"grants": [n.model_dump(mode="json") for n in notes], "text": text}

    def _grants_revoke(self, p: GrantsRevokeParams) -> dict[str, Any]:
        """Revoke one grant of this session, or all of them (``/guard revoke``)."""
        guard = self._need_guard()
        if guard.session is None:
            raise RpcFault(RpcCode.BAD_INPUT, "no pi session in this sidecar", "no-session")
        ended = guard.grants.end(
            "revoked",
            utc_now(),
            session_id=guard.session["id"],
            grant_id=p.grant_id,
            by="guard-command",
        )
        if p.grant_id is not None and not ended:
            raise RpcFault(
                RpcCode.BAD_INPUT, "no such active grant in this session", "unknown-grant"
            )
        ids = [s.record.grant_id for s in ended]
        text = (
            f"operator-guard revoked {len(ids)} grant(s): {', '.join(ids)}"
            if ids
            else "operator-guard: no active grants to revoke"
        )
        return {"revoked": ids, "text": text}

    def _declined(self, p: DeclinedParams) -> dict[str, Any]:
        guard = self._need_guard()
        if p.reason == "input-changed-after-decision":
            guard.input_changed(p.tool_name, p.input, p.cwd, tool_call_id=p.tool_call_id)
            return {"blockReason": input_changed_reason(p.tool_name), "audited": True}
        if p.reason == "sandbox-unavailable":
            # The shim blocked the agent's command before any dialog: counted, never asked.
            guard.blocked(p.tool_name, p.input, p.cwd, p.reason, tool_call_id=p.tool_call_id)
            said = sandbox_block_reason(self._sandbox) if self._sandbox is not None else None
            return {"blockReason": said or NO_SANDBOX_YET, "audited": True}
        settled = self._settled(p.approval_id, yes=False)
        approver = settled.approver if settled is not None else None
        evaluation = guard.evaluate(p.tool_name, p.input, p.cwd)
        if p.reason == "stopped" and evaluation.verdict == "allow":
            # The operator stopped the agent: even a call nobody would be asked about is
            # declined for the rest of the turn, and counted.
            guard.blocked(p.tool_name, p.input, p.cwd, "stopped", tool_call_id=p.tool_call_id)
        result = guard.record(
            p.tool_name,
            p.input,
            p.cwd,
            confirmed=False,
            tool_call_id=p.tool_call_id,
            origin="runtime-ui-confirm",
            decline_reason=p.reason,
            operator_reason=p.operator_reason,
            approver=approver,
        )
        reason = block_reason_for(
            p.reason,
            evaluation,
            p.tool_name,
            confirm_timeout_ms=p.confirm_timeout_ms,
            operator_reason=operator_reason_text(p.operator_reason),
            tool_input=p.input,
        )
        return DeclinedReply(record=result, block_reason=reason).model_dump(mode="json")

    def _consume(self, p: ConsumeParams) -> dict[str, Any]:
        envelope = p.envelope
        if p.session_file is not None:
            try:
                found = session_envelopes(Path(p.session_file), tool_call_id=p.tool_call_id)
            except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
                raise RpcFault(
                    RpcCode.BAD_INPUT,
                    "session file unreadable",
                    "session-file-unreadable",
                    path=p.session_file[:300],
                    error=getattr(exc, "strerror", None) or str(exc),
                ) from None
            envelope = found[-1] if found else None
        if self._monitor is not None:
            result = self._monitor.consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
            _log.info(
                "monitor-consume",
                decision=result.decision,
                evidence_id=result.evidence_id,
                reasons=list(result.reasons),
            )
        elif self.verify_only:
            raise RpcFault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                "keyring-open-failed",
                home=str(self.home),
                error=self._open_error,
            )
        else:
            result = self._need_guard().consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
        return result.model_dump(mode="json")

    def _plan(self, p: PlanParams) -> dict[str, Any]:
        """Run a planner; with ``runtime`` (the pi tool), fill in what the runtime knows."""
        params = p.params
        filled: dict[str, bool] = {}
        if p.runtime is not None:
            params, filled = fill_runtime_facts(p.planner, params, p.runtime)
        plan = self._need_guard().plan(p.planner, params)
        dumped: dict[str, Any] = plan.model_dump(mode="json")
        if p.runtime is not None:
            dumped["runtime"] = {
                "facts": p.runtime.model_dump(mode="json"),
                "filled": filled,
                "note": runtime_note(p.runtime.has_ui),
            }
        return dumped

    def _tool_executed(self, p: ToolExecutedParams) -> dict[str, Any]:
        self._need_guard().tool_executed(
            p.tool_call_id, p.tool_name, p.input, p.cwd, p.is_error, p.evidence_id
        )
        self._audit_network()
        return {"audited": True}

    def _audit_network(self) -> list[tuple[str, int]]:
        """Audit what the allowlist proxy refused since the last call (it runs on a thread
        of its own; the log is appended on this one); the (host, port) refused."""
        taken, new = self._network.refusals()
        if self._guard is None or self._sandbox is None or self._damage is not None:
            return []  # nothing is appended to a log that does not verify
        for refused in new:
            scope = self._sandbox.cwd
            self._guard.network_refused(refused.host, refused.port, refused.reason, scope)
        return [(r.host, r.port) for r in taken]

    def _replay(self, p: ReplayParams) -> dict[str, Any]:
        """Append the events the shim spooled while no sidecar could take them, marked late.

        Each event is validated on its own; an id already in the log (searched back to the
        earliest event's time) is skipped, so a replay that is repeated (the shim died
        before truncating its spool, two pi processes share one spool) logs nothing twice.
        """
        guard = self._need_guard()
        reply = ReplayReply(delivered=[], duplicates=[], skipped=[], rejected=[])
        now = utc_now()
        valid: list[SpooledEvent] = []
        for raw in p.events:
            raw_id = raw.get("id") if isinstance(raw, dict) else None
            shown_id = raw_id[:80] if isinstance(raw_id, str) else None
            try:
                event = _SPOOLED.validate_python(raw)
            except ValidationError as exc:
                where = ".".join(str(x) for x in exc.errors()[0]["loc"]) or "event"
                reply.rejected.append(ReplayRejected(id=shown_id, reason=f"invalid: {where}"))
                continue
            if parse_iso(event.at, "at") > now + REPLAY_SKEW:
                reply.rejected.append(ReplayRejected(id=event.id, reason="in-the-future"))
                continue
            valid.append(event)
        if not valid:
            return reply.model_dump(mode="json")
        since = min(parse_iso(e.at, "at") for e in valid) - REPLAY_SKEW
        seen = guard.logged_spool_ids(since)
        for event in valid:
            if event.id in seen:
                reply.duplicates.append(event.id)
                continue
            seen.add(event.id)
            late: dict[str, Any] = {
                "deliveredLate": True,
                "spoolId": event.id,
                "occurredAtIso": event.at,
            }
            if event.session_id is not None:
                kept = {"id": event.session_id, "file": event.session_file}
                late["session"] = {k: v for k, v in kept.items() if v is not None}
            if isinstance(event, SpooledDecline) and event.reason == "input-changed-after-decision":
                guard.input_changed(
                    event.tool_name,
                    event.input,
                    event.cwd,
                    tool_call_id=event.tool_call_id,
                    late=late,
                )
                reply.delivered.append(event.id)
            elif isinstance(event, SpooledDecline):
                appended = guard.declined_late(
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
                guard.tool_executed(
                    event.tool_call_id,
                    event.tool_name,
                    event.input,
                    event.cwd,
                    event.is_error,
                    event.evidence_id,
                    late=late,
                )
                reply.delivered.append(event.id)
        _log.info(
            "audit-replay",
            delivered=len(reply.delivered),
            duplicates=len(reply.duplicates),
            skipped=len(reply.skipped),
            rejected=len(reply.rejected),
        )
        return reply.model_dump(mode="json")

    def _sandbox_plan(self, p: SandboxPlanParams) -> dict[str, Any]:
        """The OS sandbox for the session in ``cwd``: what the shim's bash spawn hook applies.

        Audited as ``session.started`` (the log is the one record of each session's sandbox
        state); the footer (``health``) and ``/guard`` (``status``) show it from now on.
        Without a usable home nothing can be audited and every call is blocked anyway, so
        the plan comes back without a notice (the home's problem is the one to tell).
        """
        session = self._plan_sandbox(p)
        self._start_page(session.cwd)
        if self._guard is not None and self._damage is None:
            attributed = self._guard.session
            if attributed is not None and p.session_id and attributed["id"] != p.session_id:
                self._guard.session_ended("switched")  # pi moved to another session
            self._guard.attribute(p.session_id or f"sidecar-{os.getpid()}", p.session_file)
            self._guard.session_started(
                session.cwd,
                session.state,
                reason=session.reason,
                message=session.message,
                pi_version=p.pi_version,
                sidecar_restarted=p.sidecar_restarted,
                mode=p.mode,
                network=session.network,
            )
        notice = sandbox_notice(session) if self._guard is not None else None
        return self._sandbox_reply(session, notice).model_dump(mode="json")

    def _plan_sandbox(self, p: SandboxPlanParams) -> SandboxPlan:
        """Plan the session's sandbox and remember what it depends on in the workspace."""
        note_pi_runtime(p.pi_dir, p.node_path)
        session = sandbox_plan(
            p.cwd,
            self.home,
            shell=p.shell,
            extra_read_only=tuple(p.extra_read_only),
            env_names=tuple(p.env_names),
            layers=str(self._layers) if self._guard is not None else None,
            session_tmp=str(self._session_dir / SESSION_TMP_DIR) if self._guard else None,
            proxy_socket=self._network.socket_path(),
        )
        self._audit_network()
        self._network.update(session)
        self._sandbox = session
        self._sandbox_params = p
        self._sandbox_stamp = workspace_stamp(session.cwd)
        return session

    def _sandbox_reply(self, session: SandboxPlan, notice: str | None) -> SandboxPlanReply:
        return SandboxPlanReply(
            **session.model_dump(),
            notice=notice,
            notice_level="error" if session.state == "unavailable" else "warning",
            block_reason=sandbox_block_reason(session),
            audited=self._guard is not None,
        )

    def _replanned(self) -> SandboxPlanReply | None:
        """A new plan when the workspace's git files changed since the last one (the agent
        created or re-pointed a repository); ``None`` when the plan still holds."""
        params = self._sandbox_params
        if params is None or self._sandbox is None or self._sandbox.state != "sandboxed":
            return None
        if workspace_stamp(self._sandbox.cwd) == self._sandbox_stamp:
            return None
        session = self._plan_sandbox(params)
        _log.info("sandbox-replanned", cwd=session.cwd, state=session.state)
        return self._sandbox_reply(session, None)

    def _effects_review(self, p: EffectsReviewParams) -> dict[str, Any]:
        """What an agent command did: applied, or held for the operator (see ``_effects``)."""
        guard = self._need_guard()
        plan = self._sandbox
        if plan is None or plan.effects != "review":
            raise RpcFault(RpcCode.BAD_INPUT, "no effects review in this session", "no-review")
        workspace = plan.cwd
        policy = guard.classifier.policy_for(workspace)
        ignore = frozenset({"builtin.git-internals", "builtin.outside-workspace"})
        approved = self._approved.pop(p.tool_call_id, ()) if p.tool_call_id else ()
        review = self._reviewer.review(
            p.layer,
            workspace,
            protected=lambda path: policy.protects_write(path, Path(workspace), ignore=ignore),
            approved=approved,
            mount_points=plan.mount_points,
            caches=plan.cache_stores,
        )
        guard.effects_reviewed(review, p.layer, workspace, tool_call_id=p.tool_call_id)
        refusals = explain_output(p.output_tail, plan.argv or (), home=os.environ.get("HOME"))
        refusals += explain_network(p.output_tail, plan.network, self._audit_network())
        why = "\n".join(r.note for r in refusals) or None
        hint = "; ".join(f"{r.path}: {r.hint}" for r in refusals) or None
        if review.decision != "held":
            reply = EffectsReviewReply(
                decision=review.decision, summary=review.summary, note=why, hint=hint
            )
            return reply.model_dump(mode="json")
        if not p.has_ui and not self._waits_headless(workspace):
            resolved = self._resolve(p.layer, p.tool_call_id, workspace, p.command, False, "no-ui")
            note = "\n".join(n for n in (resolved.note, why) if n)
            return EffectsReviewReply(
                decision="discarded", summary=review.summary, note=note, hint=hint
            ).model_dump(mode="json")
        dialog = effects_dialog(review.held, p.command, p.output_tail)
        pending = self._broker.ask(
            kind="effects",
            title=dialog.title,
            message=dialog.message,
            details=review.summary,
            digest=question_digest(
                dialog.title, dialog.message, review.summary, {"layer": p.layer}
            ),
            tool_name="bash",
            timeout_ms=p.confirm_timeout_ms,
            tool_call_id=p.tool_call_id,
            session_id=guard.session["id"] if guard.session is not None else None,
        )
        reply = EffectsReviewReply(
            decision="held",
            summary=review.summary,
            note=why,
            hint=hint,
            dialog=dialog,
            approval=ApprovalRef(id=pending.id, digest=pending.digest),
        )
        return reply.model_dump(mode="json")

    def _effects_resolve(self, p: EffectsResolveParams) -> dict[str, Any]:
        plan = self._sandbox
        workspace = plan.cwd if plan is not None else p.cwd
        settled = self._settled(p.approval_id, yes=p.apply)
        approver = settled.approver if settled is not None else None
        resolved = self._resolve(
            p.layer, p.tool_call_id, workspace, p.command, p.apply, p.reason, approver
        )
        return resolved.model_dump(mode="json")

    def _resolve(
        self,
        layer: str,
        tool_call_id: str | None,
        workspace: str,
        command: str,
        apply: bool,
        reason: str | None,
        approver: Approver | None = None,
    ) -> EffectsResolveReply:
        guard = self._need_guard()
        held = self._reviewer.pending(layer)
        # The answer is durable in the audit log (with its evidence) before the workspace
        # changes; a crash in between leaves the layer's journal to finish.
        record = guard.record_effects(
            held,
            layer,
            workspace,
            command,
            confirmed=apply,
            tool_call_id=tool_call_id,
            reason=reason,
            approver=approver,
        )
        done = self._reviewer.resolve(layer, apply=apply)
        decision: Literal["applied", "discarded"] = "applied" if apply else "discarded"
        return EffectsResolveReply(
            decision=decision,
            note=effects_note(decision, done.held, reason),
            evidence_id=record.evidence_id,
            envelope=record.envelope.model_dump(mode="json") if record.envelope else None,
        )

    def _verify(self, p: VerifyParams) -> dict[str, Any]:
        if self._guard is not None:
            result = self._guard.verify_audit(allow_unanchored=p.allow_unanchored)
        elif self._monitor is not None:
            from audit import verify_log
            from guard._guard import AUDIT_LOG_FILE

            result = verify_log(
                self.home / AUDIT_LOG_FILE,
                self._monitor.keyring.public_keys(),
                allow_unanchored=p.allow_unanchored,
            )
        else:
            self._need_guard()
            raise AssertionError("unreachable")
        dumped: dict[str, Any] = result.model_dump(mode="json")
        return dumped


# -- the loop ----------------------------------------------------------------------------------


def serve(
    stdin: BinaryIO, stdout: BinaryIO, *, home: Path | None, verify_only: bool = False
) -> int:
    """Run the JSON-RPC loop until EOF on ``stdin`` (or SIGTERM). Returns the exit code (0)."""
    if not structlog.is_configured():
        configure_logging()  # stdout is the JSON-RPC stream: logs must go to stderr
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


def _grant_note(record: GrantRecord, *, uses: int, use: int | None = None) -> GrantNote:
    """A grant as the shim and ``/guard`` show it (one shape, from its signed record)."""
    return GrantNote(
        grant_id=record.grant_id,
        label=record.label,
        expires_at_iso=record.expires_at_iso,
        max_uses=record.max_uses,
        use=use,
        uses=uses,
    )


def _alive(session: str) -> bool:
    """Whether the sidecar that made ``session`` (``s<pid>-<random>``) still runs."""
    try:
        pid = int(session[1:].split("-", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
