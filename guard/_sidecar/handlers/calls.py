"""The methods about one tool call: ``evaluate`` (allowed, blocked, covered by a grant, or
asked), ``record`` (the operator's answer), ``audit.declined``, ``consume``,
``audit.toolExecuted`` and ``audit.replay`` (what the shim spooled); the guard decides and
records, this part maps the wire to it and words the replies.

Each request classifies its call once (:meth:`guard.Guard.classify`, from the input the
request carries: the input the call runs with) and every step of the request takes that
:class:`guard._facade.consumer.ClassifiedCall`. Nothing carries it to a later request: ``record``,
``consume`` and ``audit.toolExecuted`` judge the call again when they arrive, since the
policy (its files, the paths a rule names) or the input may have changed since the question.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from audit.wire import utc_now
from guard._effects import UnaskedTarget, unasked
from guard._errors import RpcFault
from guard._evidence import Evaluation
from guard._facade import ClassifiedCall, operator_reason_text
from guard._logging import get_logger
from guard._pi import session_envelopes
from guard._policy import pi_file_target
from guard._sandbox import workspace_stamp
from guard._sidecar.framing import RpcCode
from guard._sidecar.handlers.sandbox import SandboxPart
from guard._sidecar.handlers.state import grant_note
from guard._sidecar.text import (
    NO_SANDBOX_YET,
    block_reason_for,
    dialog_for,
    grant_choice,
    input_changed_reason,
    sandbox_block_reason,
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
    ToolExecutedParams,
)

__all__ = ["CallsPart"]

_log = get_logger("guard.sidecar")


class CallsPart(SandboxPart):
    """The call methods (see the module)."""

    def _evaluate(self, p: EvaluateParams) -> dict[str, Any]:
        guard = self._need_guard()
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
                self._approved[p.tool_call_id] = approved
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
        elif (unasked := self._restorable(p, evaluation)) is not None:
            # Every target can be restored or rebuilt from what the operator had: it runs in
            # the sandbox without a dialog, and the effects review checks what it really did.
            assert p.tool_call_id is not None
            self._unasked[p.tool_call_id] = unasked
            reply = EvaluateReply(evaluation=evaluation, action="allow")
        elif not p.has_ui and self._waits_headless(p.cwd):
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
            replanned = self._replanned()
            if replanned is not None:
                reply = reply.model_copy(update={"sandbox": replanned})
        target = pi_file_target(p.tool_name, p.input, p.cwd) if reply.action != "block" else None
        if target is not None:
            reply = reply.model_copy(update={"file": JudgedFile(path=target[0], real=target[1])})
        return reply.model_dump(mode="json")

    def _restorable(
        self, p: EvaluateParams, evaluation: Evaluation
    ) -> tuple[UnaskedTarget, ...] | None:
        """Why an asked bash call may run unasked (``guard._effects.quiet``), or None: only
        when it runs in the sandbox with the effects review and the user did not set
        ``[sandbox] ask = "every"``."""
        plan = self._sandbox
        ask, regenerable = self._quiet
        if (
            ask != "losses"
            or p.tool_name != "bash"
            or p.tool_call_id is None
            or p.parent is not None
            or plan is None
            or plan.state != "sandboxed"
            or plan.effects != "review"
            or workspace_stamp(plan.cwd) != self._sandbox_stamp  # re-planned at once below
            or os.path.realpath(p.cwd) != os.path.realpath(plan.cwd)
        ):
            return None
        return unasked(
            evaluation.rule_ids,
            evaluation.targets,
            plan.cwd,
            self._baseline,
            regenerable=regenerable,
        )

    def _record(self, p: RecordParams) -> dict[str, Any]:
        guard = self._need_guard()
        asked = self._broker.result(p.approval_id) if p.approval_id is not None else None
        signed = asked.signed if asked is not None else None
        answer = self._settled(p.approval_id, yes=p.confirmed)
        approver = answer.approver if answer is not None else None
        # The question's winning answer says which grant, if any (any screen may choose one).
        chosen = answer.grant if p.approval_id is not None and answer is not None else p.grant
        # Judged afresh, once for this request: not the verdict the question was asked on (the
        # policy or what a rule names may have changed while the operator read it).
        call = guard.classify(p.tool_name, p.input, p.cwd)
        if p.confirmed and p.tool_call_id is not None:
            self._approve(p.tool_call_id, call)
            self._answered.add(p.tool_call_id)
        if self._sandbox is not None and self._sandbox.effects == "review":
            self._retake_baseline(self._sandbox.cwd)  # the operator answered: what they have
        shown = self._offered.pop(p.tool_call_id, ()) if p.tool_call_id else ()
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
            workspace = self._workspace(p.cwd)
            now = guard.grant_offers_call(call, workspace=workspace)
            # Derived again from the call: a grant is kept only if it is still the one shown.
            if chosen < len(shown) and now[chosen : chosen + 1] == shown[chosen : chosen + 1]:
                grant = guard.create_grant(shown[chosen], result.evidence_id, workspace=workspace)
                note = grant_note(grant, uses=0)
        reply = RecordReply(**result.model_dump(), grant=note)
        return reply.model_dump(mode="json")

    def _approve(self, tool_call_id: str, call: ClassifiedCall) -> None:
        """What the operator (or a grant) said yes to, as this request judged it, resolved
        now: the effects review holds what the command does beyond it (a link swapped in by
        a parallel call, say)."""
        self._approved[tool_call_id] = tuple(os.path.realpath(t) for t in call.verdict.targets)

    def _covered_or_asked(
        self, p: EvaluateParams, call: ClassifiedCall, evaluation: Evaluation
    ) -> EvaluateReply:
        """A call the policy asks about: covered by a grant of this session (its own evidence,
        no dialog), or the dialog, with the grants it may offer."""
        guard = self._need_guard()
        workspace = self._workspace(p.cwd)
        covered = guard.covered_call(
            call,
            workspace=workspace,
            ttl_seconds=p.ttl_seconds,
            tool_call_id=p.tool_call_id,
        )
        if covered is not None and covered.envelope is not None:
            details = covered.envelope.details
            assert details.covered_by is not None
            if p.tool_call_id is not None:
                self._approve(p.tool_call_id, call)
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
        offered = guard.grant_offers_call(call, workspace=workspace)
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
            parent=p.parent,
        )
        approval = self._open_question(p, evaluation, dialog)
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
                self._page_elsewhere() if self._page is None else None,
            ),
        )

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
                call_checked_elsewhere=p.call_checked_elsewhere,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
        return result.model_dump(mode="json")

    def _tool_executed(self, p: ToolExecutedParams) -> dict[str, Any]:
        self._need_guard().tool_executed(
            p.tool_call_id,
            p.tool_name,
            p.input,
            p.cwd,
            p.is_error,
            p.evidence_id,
            unasked=self._unasked.pop(p.tool_call_id, None),
        )
        self._audit_network()
        return {"audited": True}

    def _replay(self, p: ReplayParams) -> dict[str, Any]:
        """Append the events the shim spooled while no sidecar could take them, marked late,
        each once (:meth:`guard.Guard.replay`)."""
        reply = self._need_guard().replay(p.events)
        _log.info(
            "audit-replay",
            delivered=len(reply.delivered),
            duplicates=len(reply.duplicates),
            skipped=len(reply.skipped),
            rejected=len(reply.rejected),
        )
        return reply.model_dump(mode="json")
