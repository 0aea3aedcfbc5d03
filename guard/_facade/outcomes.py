"""What became of a call after it was judged, on the facade: it ran, the guard stopped it
without asking, the operator declined it, or its input changed after the decision."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from guard._approvals import Approver
from guard._effects import UnaskedTarget
from guard._evidence import Evaluation, RecordResult, compute_fingerprint, payload_hash
from guard._facade.base import (
    BlockReason,
    DeclineReason,
    GuardBase,
    LateDeclineReason,
    fingerprint_fields,
    operator_reason_text,
)
from guard._facade.consumer import ClassifiedCall, check_tool_call_id

__all__ = ["OutcomesPart"]


class OutcomesPart(GuardBase):
    """``tool.executed`` and ``confirmation.declined`` for every way a call ends."""

    def tool_executed(
        self,
        tool_call_id: str,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        is_error: bool,
        evidence_id: str | None = None,
        *,
        late: Mapping[str, Any] | None = None,
        unasked: Sequence[UnaskedTarget] | None = None,
    ) -> None:
        """Audit that a call ran (:meth:`tool_executed_call` on the call as classified here)."""
        self.tool_executed_call(
            self.classify(tool_name, tool_input, cwd),
            tool_call_id,
            is_error,
            evidence_id,
            late=late,
            unasked=unasked,
        )

    def tool_executed_call(
        self,
        call: ClassifiedCall,
        tool_call_id: str,
        is_error: bool,
        evidence_id: str | None = None,
        *,
        late: Mapping[str, Any] | None = None,
        unasked: Sequence[UnaskedTarget] | None = None,
    ) -> None:
        """Audit that a call ran, with the payload hash of the input *as executed* (``call``
        is classified from what ran, in the request that says it ran).

        ``late``: ``deliveredLate``, ``spoolId`` and ``occurredAtIso`` of a result the
        shim kept in its spool while the sidecar was down. ``unasked``: why a destructive
        call ran without a dialog (each target restorable against the operator's baseline).
        """
        evaluation = self.evaluate_call(call)
        fields: dict[str, Any] = {
            "toolCallId": tool_call_id,
            "toolName": call.name,
            "isError": bool(is_error),
            "actionKind": evaluation.action_kind,
            "payloadHash": payload_hash(call.input),
        }
        if evaluation.fingerprint is not None:
            fields.update(fingerprint_fields(evaluation.fingerprint))
        if evidence_id is not None:
            fields["evidenceId"] = evidence_id
        # Why it ran: the rules that decided (a user rule that relaxed a built-in one
        # included) and what it was, redacted, so a call that ran without asking is legible.
        if evaluation.rule_ids:
            fields["ruleIds"] = list(evaluation.rule_ids[:16])
        if evaluation.preview and self._preview:
            fields["preview"] = evaluation.preview
        if unasked and evaluation.action_kind != "local-safe":
            fields["ranUnasked"] = [{"path": t.path, "reason": t.reason} for t in unasked[:64]]
        self._append("tool.executed", {**fields, **(late or {})})

    def blocked(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        reason: BlockReason,
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a call the guard stopped without asking: :meth:`blocked_call`."""
        check_tool_call_id(tool_call_id)
        self.blocked_call(
            self.classify(tool_name, tool_input, cwd), reason, tool_call_id=tool_call_id, late=late
        )

    def blocked_call(
        self,
        call: ClassifiedCall,
        reason: BlockReason,
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a call the guard stopped without asking (``confirmation.declined`` with a
        block ``reason``), whatever its kind: a local-safe call that could not run because
        the sidecar or the sandbox was not there is counted like a risky one."""
        check_tool_call_id(tool_call_id)
        evaluation = self.evaluate_call(call)
        fields: dict[str, Any] = {
            "reason": reason,
            "actionKind": evaluation.action_kind,
            "toolName": call.name,
            "payloadHash": payload_hash(call.input),
        }
        fields.update(fingerprint_fields(evaluation.fingerprint))
        if tool_call_id is not None:
            fields["toolCallId"] = tool_call_id
        if evaluation.rule_ids:
            fields["ruleIds"] = list(evaluation.rule_ids[:16])
        if evaluation.preview and self._preview:
            fields["preview"] = evaluation.preview
        self._append("confirmation.declined", {**fields, **(late or {})})

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
        """Audit the operator's (or the shim's) no to a call: :meth:`decline_call`."""
        return self.decline_call(
            self.classify(tool_name, tool_input, cwd),
            reason,
            tool_call_id=tool_call_id,
            operator_reason=operator_reason,
            approver=approver,
        )

    def decline_call(
        self,
        call: ClassifiedCall,
        reason: DeclineReason,
        *,
        tool_call_id: str | None = None,
        operator_reason: str | None = None,
        approver: Approver | None = None,
    ) -> tuple[Evaluation, RecordResult]:
        """Audit the operator's (or the shim's) no to a classified call: its evaluation and
        the record. A ``stopped`` call nobody would be asked about is also counted as
        blocked: the operator stopped the agent, so it is declined for the rest of the turn.
        """
        evaluation = self.evaluate_call(call)
        if reason == "stopped" and evaluation.verdict == "allow":
            self.blocked_call(call, "stopped", tool_call_id=tool_call_id)
        result = self.record_call(
            call,
            confirmed=False,
            tool_call_id=tool_call_id,
            origin="runtime-ui-confirm",
            decline_reason=reason,
            operator_reason=operator_reason,
            approver=approver,
        )
        return evaluation, result

    def declined_late(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        reason: LateDeclineReason,
        late: Mapping[str, Any],
        tool_call_id: str | None = None,
        operator_reason: str | None = None,
    ) -> bool:
        """Append a ``confirmation.declined`` the shim could not deliver when it happened.

        ``late`` holds ``deliveredLate``, ``spoolId`` and ``occurredAtIso``. The call is
        classified now (the fingerprint is computed here, never taken from the shim); a
        call the policy now allows has no fingerprint and is not appended (returns False).
        """
        check_tool_call_id(tool_call_id)
        call = self.classify(tool_name, tool_input, cwd)
        if reason in ("sidecar-unavailable", "sandbox-unavailable"):
            # Blocked whatever the policy says of it now: counted, local-safe or not.
            self.blocked_call(call, reason, tool_call_id=tool_call_id, late=late)
            return True
        evaluation = self.evaluate_call(call)
        fp = evaluation.fingerprint
        if fp is None:
            return False
        preview = {"preview": evaluation.preview} if evaluation.preview and self._preview else {}
        named = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        said = operator_reason_text(operator_reason)
        self._append(
            "confirmation.declined",
            {
                "reason": reason,
                **fingerprint_fields(fp),
                **named,
                **preview,
                **({"operatorReason": said} if said else {}),
                **late,
            },
        )
        return True

    def input_changed(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a call refused at execution because its input is not the one judged:
        :meth:`input_changed_call`."""
        check_tool_call_id(tool_call_id)
        self.input_changed_call(
            self.classify(tool_name, tool_input, cwd), tool_call_id=tool_call_id, late=late
        )

    def input_changed_call(
        self,
        call: ClassifiedCall,
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a classified call refused at execution because its input is not the one
        judged.

        The fingerprint is the input that would have run, as a protected action (even
        when the policy would have let that input through: it was never the one decided).
        """
        check_tool_call_id(tool_call_id)
        fp = compute_fingerprint(
            "protected", call.name, call.input, call.cwd, path=call.verdict.path
        )
        fields = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        self._append(
            "confirmation.declined",
            {
                "reason": "input-changed-after-decision",
                **fingerprint_fields(fp),
                **fields,
                **(late or {}),
            },
        )
