"""The session's intake (``evaluate``): a call's first request, met once. It is allowed,
blocked, covered by a grant of this session, run unasked in the sandbox (the effects review
checks what it did), left waiting for another screen (no UI), or asked: the dialog, with the
grants it may offer, opened for every screen.

The request classifies its call once (:meth:`guard.Guard.classify`, from the input the call
runs with) and every step takes that :class:`guard._facade.consumer.ClassifiedCall`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from audit.wire import utc_now
from guard._evidence import Evaluation
from guard._facade import ClassifiedCall
from guard._policy import pi_file_target
from guard._sidecar.session.desk import Desk, grant_note
from guard._sidecar.session.effects import Effects
from guard._sidecar.session.home import Home
from guard._sidecar.session.memo import Memo
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.text import block_reason_for, dialog_for, grant_choice, wait_notice
from guard._sidecar.wire import EvaluateParams, EvaluateReply, JudgedFile

__all__ = ["Intake"]


class Intake:
    """``evaluate`` (see the module): it reads the home, the sandbox and the effects review's
    quiet settings, opens questions on the desk and notes the call in the memo."""

    def __init__(
        self, home: Home, desk: Desk, sandbox: SessionSandbox, effects: Effects, memo: Memo
    ) -> None:
        self.home = home
        self.desk = desk
        self.sandbox = sandbox
        self.effects = effects
        self.memo = memo

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
                self.memo.approve_targets(p.tool_call_id, evaluation.targets)
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
            self.memo.unasked[p.tool_call_id] = unasked
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
                self.memo.approve(p.tool_call_id, call)
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
            self.memo.offered[p.tool_call_id] = offered
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
