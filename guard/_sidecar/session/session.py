"""The session a sidecar serves: its parts, built in one place, and the verbs of a call's
life (evaluate, record, decline, consume, executed, replay), the start of the session
(``sandbox.plan``) and its end.

The parts: the :class:`~guard._sidecar.session.home.Home` (the guard opened on the home, or
why it could not be, and the damage of its log), the
:class:`~guard._sidecar.session.desk.Desk` (questions, answers, offered grants), the
:class:`~guard._sidecar.session.sandbox.SessionSandbox` (plan, params, stamp, network), the
:class:`~guard._sidecar.session.effects.Effects` review (layers, baseline, quiet settings),
the :class:`~guard._sidecar.session.home.Export` of decisions and the
:class:`~guard._sidecar.session.status.Status` reports.

Each request classifies its call once (:meth:`guard.Guard.classify`, from the input the
request carries: the input the call runs with) and every step of the request takes that
:class:`guard._facade.consumer.ClassifiedCall`. Nothing carries it to a later request: ``record``,
``consume`` and ``audit.toolExecuted`` judge the call again when they arrive, since the
policy (its files, the paths a rule names) or the input may have changed since the question.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

from audit import AuditError
from audit.wire import utc_now
from guard._errors import GuardError, RpcFault
from guard._evidence import Evaluation
from guard._facade import ClassifiedCall, operator_reason_text
from guard._home import LAYERS_DIR, SESSIONS_DIR
from guard._logging import get_logger
from guard._pi import session_envelopes
from guard._policy import ToolFacts, pi_file_target
from guard._sidecar.escape import command_line
from guard._sidecar.framing import RpcCode
from guard._sidecar.session.desk import Desk, grant_note
from guard._sidecar.session.effects import Effects
from guard._sidecar.session.home import Export, Home
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.session.status import Status
from guard._sidecar.text import (
    NO_SANDBOX_YET,
    block_reason_for,
    dialog_for,
    grant_choice,
    input_changed_reason,
    sandbox_block_reason,
    sandbox_notice,
    wait_notice,
)
from guard._sidecar.wire import (
    ConsumeParams,
    DeclinedParams,
    DeclinedReply,
    EvaluateParams,
    EvaluateReply,
    GrantNote,
    JudgedFile,
    RecordParams,
    RecordReply,
    ReplayParams,
    SandboxPlanParams,
    ToolExecutedParams,
)

__all__ = ["Session"]

_log = get_logger("guard.sidecar")


class Session:
    """One pi session's guard: its parts (see the module) and the verbs of a call's life."""

    def __init__(self, home: Path, *, verify_only: bool = False) -> None:
        self.verify_only = verify_only
        # This sidecar's directory: its command layers (guard/_effects), its /tmp, the
        # listener of a second terminal, the export's status.
        self.session_dir = home / SESSIONS_DIR / f"s{os.getpid()}-{secrets.token_hex(4)}"
        self.home = Home(home)
        self.desk = Desk(self.home, self.session_dir)
        self.sandbox = SessionSandbox(self.home, self.session_dir, self.session_dir / LAYERS_DIR)
        self.effects = Effects(self.home, self.desk, self.sandbox)
        self.export = Export()
        self.status = Status(self.home, self.sandbox, self.desk, self.export)
        try:
            guard = self.home.open(verify_only=verify_only)
            if guard is not None:
                self.export.start(guard, home, self.session_dir)
                self.home.anchor("session-start")
                self.effects.settle_old_layers()
                self.desk.start_local(self._about)
        except (GuardError, AuditError, OSError) as exc:
            self.home.failed(exc)

    def _about(self) -> dict[str, Any]:
        """Whose questions these are, for a screen outside pi (op ``about``, on the
        listener's thread: reads only): pi's session id, its folder, this sidecar's page."""
        guard = self.home.guard
        session = guard.session if guard is not None else None
        plan, page = self.sandbox.plan, self.desk.page
        return {
            "pid": os.getpid(),
            "sessionId": session.get("id") if session is not None else None,
            "cwd": plan.cwd if plan is not None else None,
            "page": page.url if page is not None else None,
        }

    # -- the session's start and end ---------------------------------------------------------

    def start(self, p: SandboxPlanParams) -> dict[str, Any]:
        """The OS sandbox for the session in ``cwd``: what the shim's bash spawn hook applies.

        Audited as ``session.started`` (the log is the one record of each session's sandbox
        state); the footer (``health``) and ``/guard`` (``status``) show it from now on.
        Without a usable home nothing can be audited and every call is blocked anyway, so
        the plan comes back without a notice (the home's problem is the one to tell).
        """
        session, settings = self.sandbox.planned(p)
        if session.effects == "review":
            # The operator's baseline, taken as the session starts (before any agent command).
            self.effects.retake_baseline(session.cwd)
            self.effects.quiet = (settings.ask, tuple(settings.regenerable))
        self.desk.start_page(session.cwd)
        guard = self.home.writable
        if guard is not None:
            attributed = guard.session
            if attributed is not None and p.session_id and attributed["id"] != p.session_id:
                guard.sessions.ended("switched")  # pi moved to another session
            guard.attribute(p.session_id or f"sidecar-{os.getpid()}", p.session_file)
            for tool in p.tools:
                guard.classifier.learn(tool)
            guard.sessions.started(
                session.cwd,
                session.state,
                reason=session.reason,
                message=session.message,
                pi_version=p.pi_version,
                sidecar_restarted=p.sidecar_restarted,
                mode=p.mode,
                network=session.network,
                tools=[_tool_summary(t) for t in p.tools],
            )
        notice = sandbox_notice(session) if self.home.guard is not None else None
        _warm_redaction()
        return self.sandbox.reply(session, notice).model_dump(mode="json")

    def close(self) -> None:
        """The session ends: open questions are withdrawn, what still waits for the operator
        is discarded (audited, unless the log is damaged: nothing is signed over it), its
        /tmp and layers go."""
        self.desk.close()
        self.sandbox.close()
        guard = self.home.guard
        if guard is not None:
            if self.home.damage is None:
                self.effects.discard_held(self.effects.reviewer, "session-end")
                if guard.session is not None:
                    with contextlib.suppress(GuardError, AuditError, OSError):
                        guard.sessions.ended("shutdown")
            self.export.stop(guard)
            shutil.rmtree(self.session_dir, ignore_errors=True)
            if self.home.damage is None:
                self.home.anchor("session-end")
            guard.close()
        if self.home.monitor is not None:
            self.home.monitor.close()

    # -- a call's life -----------------------------------------------------------------------

    def evaluate(self, p: EvaluateParams) -> dict[str, Any]:
        """Allowed, blocked, covered by a grant, run unasked in the sandbox, or asked."""
        guard = self.home.need_guard()
        if p.tool is not None:
            guard.classifier.learn(p.tool)  # record and the call's end judge it the same way
        call = guard.classify(p.tool_name, p.input, p.cwd)  # once for this request
        evaluation = guard.evaluate_call(call)
        if evaluation.verdict != "allow":
            guard.audit.check()  # no dialog whose Yes could not be recorded
        reply: EvaluateReply
        if evaluation.verdict == "allow":
            if evaluation.rule_ids and evaluation.targets and p.tool_call_id is not None:
                # A rule of the user's let it through unasked: what it names is approved, so the
                # effects review does not hold it again (only what the command does beyond it).
                approved = tuple(os.path.realpath(t) for t in evaluation.targets)
                self.desk.approved[p.tool_call_id] = approved
            reply = EvaluateReply(evaluation=evaluation, action="allow")
        elif evaluation.verdict == "block":
            guard.record_call(
                call,
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
        elif (unasked := self.effects.restorable(p, evaluation)) is not None:
            # Every target can be restored or rebuilt from what the operator had: it runs in
            # the sandbox without a dialog, and the effects review checks what it really did.
            assert p.tool_call_id is not None
            self.effects.unasked[p.tool_call_id] = unasked
            reply = EvaluateReply(evaluation=evaluation, action="allow")
        elif not p.has_ui and self.sandbox.waits_headless(p.cwd):
            reply = self._asked_headless(p, evaluation)
        elif not p.has_ui:
            guard.record_call(
                call,
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
            reply = self._covered_or_asked(p, call, evaluation)
        if p.tool_name == "bash" and reply.action != "block":
            replanned = self.sandbox.replanned()
            if replanned is not None:
                reply = reply.model_copy(update={"sandbox": replanned})
        target = pi_file_target(p.tool_name, p.input, p.cwd) if reply.action != "block" else None
        if target is not None:
            reply = reply.model_copy(update={"file": JudgedFile(path=target[0], real=target[1])})
        return reply.model_dump(mode="json")

    def _covered_or_asked(
        self, p: EvaluateParams, call: ClassifiedCall, evaluation: Evaluation
    ) -> EvaluateReply:
        """A call the policy asks about: covered by a grant of this session (its own evidence,
        no dialog), or the dialog, with the grants it may offer."""
        guard = self.home.need_guard()
        workspace = self.sandbox.workspace(p.cwd)
        covered = guard.grants.covered_call(
            call,
            workspace=workspace,
            ttl_seconds=p.ttl_seconds,
            tool_call_id=p.tool_call_id,
        )
        if covered is not None and covered.envelope is not None:
            details = covered.envelope.details
            assert details.covered_by is not None
            if p.tool_call_id is not None:
                self.desk.approve(p.tool_call_id, call)
            note = next(
                (
                    grant_note(s.record, uses=s.uses, use=details.covered_by.use)
                    for s in guard.grants.listed(utc_now())
                    if s.record.grant_id == details.covered_by.grant_id
                ),
                None,
            )
            return EvaluateReply(
                evaluation=evaluation, action="allow", record=covered, covered=note
            )
        offered = guard.grants.offers_call(call, workspace=workspace)
        if p.tool_call_id is not None and offered:
            self.desk.offered[p.tool_call_id] = offered
        limits = guard.grants.limits(workspace)
        until = utc_now() + timedelta(minutes=limits.max_minutes)
        dialog = dialog_for(
            evaluation,
            p.tool_name,
            ttl_seconds=p.ttl_seconds,
            confirm_timeout_ms=p.confirm_timeout_ms,
            tool_input=p.input,
            grants=[grant_choice(o, until=until, max_uses=limits.max_uses) for o in offered],
            parent=p.parent,
        )
        approval = self.desk.open_question(p, evaluation, dialog)
        return EvaluateReply(
            evaluation=evaluation, action="confirm", dialog=dialog, approval=approval
        )

    def _asked_headless(self, p: EvaluateParams, evaluation: Evaluation) -> EvaluateReply:
        """No UI, but the operator may answer elsewhere: the question is opened for the other
        screens only (no grant is offered), and the shim waits for its answer."""
        dialog = dialog_for(
            evaluation,
            p.tool_name,
            ttl_seconds=p.ttl_seconds,
            confirm_timeout_ms=p.confirm_timeout_ms,
            tool_input=p.input,
            parent=p.parent,
        )
        approval = self.desk.open_question(p, evaluation, dialog)
        page = self.desk.page
        return EvaluateReply(
            evaluation=evaluation,
            action="wait",
            approval=approval,
            wait_notice=wait_notice(
                p.tool_name,
                approval.id,
                p.confirm_timeout_ms,
                page.login_url if page is not None else None,
                self.desk.page_elsewhere() if page is None else None,
            ),
        )

    def record(self, p: RecordParams) -> dict[str, Any]:
        """The operator's answer to an asked call (and the grant chosen with a yes)."""
        guard = self.home.need_guard()
        desk = self.desk
        asked = desk.broker.result(p.approval_id) if p.approval_id is not None else None
        signed = asked.signed if asked is not None else None
        answer = desk.settled(p.approval_id, yes=p.confirmed)
        approver = answer.approver if answer is not None else None
        # The question's winning answer says which grant, if any (any screen may choose one).
        chosen = answer.grant if p.approval_id is not None and answer is not None else p.grant
        # Judged afresh, once for this request: not the verdict the question was asked on (the
        # policy or what a rule names may have changed while the operator read it).
        call = guard.classify(p.tool_name, p.input, p.cwd)
        if p.confirmed and p.tool_call_id is not None:
            desk.approve(p.tool_call_id, call)
            desk.answered.add(p.tool_call_id)
        plan = self.sandbox.plan
        if plan is not None and plan.effects == "review":
            self.effects.retake_baseline(plan.cwd)  # the operator answered: what they have
        shown = desk.offered.pop(p.tool_call_id, ()) if p.tool_call_id else ()
        result = guard.record_call(
            call,
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
            workspace = self.sandbox.workspace(p.cwd)
            now = guard.grants.offers_call(call, workspace=workspace)
            # Derived again from the call: a grant is kept only if it is still the one shown.
            if chosen < len(shown) and now[chosen : chosen + 1] == shown[chosen : chosen + 1]:
                grant = guard.grants.create(shown[chosen], result.evidence_id, workspace=workspace)
                note = grant_note(grant, uses=0)
        reply = RecordReply(**result.model_dump(), grant=note)
        return reply.model_dump(mode="json")

    def decline(self, p: DeclinedParams) -> dict[str, Any]:
        """A call the shim blocked (no, a timeout, changed input, no sandbox), audited."""
        guard = self.home.need_guard()
        if p.reason == "input-changed-after-decision":
            guard.input_changed(p.tool_name, p.input, p.cwd, tool_call_id=p.tool_call_id)
            return {"blockReason": input_changed_reason(p.tool_name), "audited": True}
        if p.reason == "sandbox-unavailable":
            # The shim blocked the agent's command before any dialog: counted, never asked.
            guard.blocked(p.tool_name, p.input, p.cwd, p.reason, tool_call_id=p.tool_call_id)
            plan = self.sandbox.plan
            said = sandbox_block_reason(plan) if plan is not None else None
            return {"blockReason": said or NO_SANDBOX_YET, "audited": True}
        settled = self.desk.settled(p.approval_id, yes=False)
        approver = settled.approver if settled is not None else None
        evaluation, result = guard.decline(
            p.tool_name,
            p.input,
            p.cwd,
            p.reason,
            tool_call_id=p.tool_call_id,
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

    def consume(self, p: ConsumeParams) -> dict[str, Any]:
        """Whether the call about to run carries evidence of its approval (once)."""
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
        monitor = self.home.monitor
        if monitor is not None:
            result = monitor.consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                call_checked_elsewhere=p.call_checked_elsewhere,
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
                home=str(self.home.path),
                error=self.home.open_error,
            )
        else:
            result = self.home.need_guard().consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                call_checked_elsewhere=p.call_checked_elsewhere,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
        return result.model_dump(mode="json")

    def executed(self, p: ToolExecutedParams) -> dict[str, Any]:
        """The call ran (``audit.toolExecuted``): audited with why it ran unasked, if so."""
        self.home.need_guard().tool_executed(
            p.tool_call_id,
            p.tool_name,
            p.input,
            p.cwd,
            p.is_error,
            p.evidence_id,
            unasked=self.effects.unasked.pop(p.tool_call_id, None),
        )
        self.sandbox.audit_network()
        return {"audited": True}

    def replay(self, p: ReplayParams) -> dict[str, Any]:
        """Append the events the shim spooled while no sidecar could take them, marked late,
        each once (:meth:`guard._facade.Spool.replay`)."""
        reply = self.home.need_guard().spool.replay(p.events)
        _log.info(
            "audit-replay",
            delivered=len(reply.delivered),
            duplicates=len(reply.duplicates),
            skipped=len(reply.skipped),
            rejected=len(reply.rejected),
        )
        return reply.model_dump(mode="json")


@cache
def _warm_redaction() -> None:
    """The first call's preview needs the redaction rules (detect-secrets, ~60 ms to import):
    loaded once the session has started, while the model thinks, not when that call waits."""
    threading.Thread(target=command_line, args=("true",), name="warm", daemon=True).start()


def _tool_summary(tool: ToolFacts) -> dict[str, str]:
    out = {"name": tool.name, "source": tool.source}
    if tool.server is not None:
        out["server"] = tool.server
    return out
