"""The answer to an asked call (``record``, ``audit.declined``): the question settled on the
desk by the answer that won (a yes no screen gave is refused), the call judged afresh (the
policy or what a rule names may have changed while the operator read it), recorded (a yes
mints signed evidence) with the grant chosen with it, or the shim's no audited (a no, a
timeout, changed input, no sandbox).
"""

from __future__ import annotations

from typing import Any

from guard._facade import operator_reason_text
from guard._sidecar.session.desk import Desk, grant_note
from guard._sidecar.session.effects import Effects
from guard._sidecar.session.home import Home
from guard._sidecar.session.memo import Memo
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.text import (
    NO_SANDBOX_YET,
    block_reason_for,
    input_changed_reason,
    sandbox_block_reason,
)
from guard._sidecar.wire import DeclinedParams, DeclinedReply, GrantNote, RecordParams, RecordReply

__all__ = ["Answers"]


class Answers:
    """``record`` and ``decline`` (see the module): they settle the desk's questions, take
    what the memo kept of the call, and retake the effects review's baseline."""

    def __init__(
        self, home: Home, desk: Desk, sandbox: SessionSandbox, effects: Effects, memo: Memo
    ) -> None:
        self.home = home
        self.desk = desk
        self.sandbox = sandbox
        self.effects = effects
        self.memo = memo

    def record(self, p: RecordParams) -> dict[str, Any]:
        """The operator's answer to an asked call (and the grant chosen with a yes)."""
        guard = self.home.need_guard()
        desk, memo = self.desk, self.memo
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
            memo.approve(p.tool_call_id, call)
            memo.answered.add(p.tool_call_id)
        plan = self.sandbox.plan
        if plan is not None and plan.effects == "review":
            self.effects.retake_baseline(plan.cwd)  # the operator answered: what they have
        shown = memo.offered.pop(p.tool_call_id, ()) if p.tool_call_id else ()
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
