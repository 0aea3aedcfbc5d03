"""What became of a call after it was judged, on the facade: it ran, the guard stopped it
without asking, the operator declined it, or its input changed after the decision."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit.wire import ConfirmationDeclinedData, SessionRef, ToolExecutedData, UnaskedTargetData
from guard._approvals import Approver
from guard._effects import UnaskedTarget
from guard._evidence import Evaluation, RecordResult, compute_fingerprint, payload_hash
from guard._facade.calls import Calls
from guard._facade.consumer import ClassifiedCall, check_tool_call_id
from guard._facade.core import Core
from guard._facade.fields import (
    BlockReason,
    DeclineReason,
    LateDeclineReason,
    fingerprint_fields,
    operator_reason_text,
)

__all__ = ["Late", "Outcomes"]


@dataclass(frozen=True)
class Late:
    """An event the shim kept in its spool while no sidecar could take it: its spool id,
    when it happened by the shim's clock, and the pi session it happened in (its record
    names that session, or none, never the one delivering it)."""

    spool_id: str
    occurred_at_iso: str
    session: SessionRef | None = None

    def fields(self) -> dict[str, Any]:
        """As an event model's keyword arguments, ``delivered_late`` set."""
        return {
            "delivered_late": True,
            "spool_id": self.spool_id,
            "occurred_at_iso": self.occurred_at_iso,
            "session": self.session,
        }


def _late(late: Late | None) -> dict[str, Any]:
    return {} if late is None else late.fields()


class Outcomes:
    """``tool.executed`` and ``confirmation.declined`` for every way a call ends."""

    def __init__(self, core: Core, calls: Calls) -> None:
        self._core = core
        self._calls = calls

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
        """Audit that a call ran (:meth:`tool_executed_call` on the call as classified here)."""
        self.tool_executed_call(
            self._calls.classify(tool_name, tool_input, cwd),
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
        late: Late | None = None,
        unasked: Sequence[UnaskedTarget] | None = None,
    ) -> None:
        """Audit that a call ran, with the payload hash of the input *as executed* (``call``
        is classified from what ran, in the request that says it ran).

        ``late``: a result the shim kept in its spool while the sidecar was down.
        ``unasked``: why a destructive call ran without a dialog (each target restorable
        against the operator's baseline).
        """
        evaluation = self._calls.evaluate_call(call)
        ran_unasked = (
            [UnaskedTargetData(path=t.path, reason=t.reason) for t in unasked[:64]]
            if unasked and evaluation.action_kind != "local-safe"
            else None
        )
        # Why it ran: the rules that decided (a user rule that relaxed a built-in one
        # included) and what it was, redacted, so a call that ran without asking is legible.
        self._core.append(
            ToolExecutedData(
                tool_call_id=tool_call_id,
                is_error=bool(is_error),
                **_call_fields(call, evaluation),
                evidence_id=evidence_id,
                rule_ids=list(evaluation.rule_ids[:16]) or None,
                preview=evaluation.preview if evaluation.preview and self._core.preview else None,
                ran_unasked=ran_unasked,
                **_late(late),
            )
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
        """Audit a call the guard stopped without asking: :meth:`blocked_call`."""
        check_tool_call_id(tool_call_id)
        self.blocked_call(
            self._calls.classify(tool_name, tool_input, cwd),
            reason,
            tool_call_id=tool_call_id,
            late=late,
        )

    def blocked_call(
        self,
        call: ClassifiedCall,
        reason: BlockReason,
        *,
        tool_call_id: str | None = None,
        late: Late | None = None,
    ) -> None:
        """Audit a call the guard stopped without asking (``confirmation.declined`` with a
        block ``reason``), whatever its kind: a local-safe call that could not run because
        the sidecar or the sandbox was not there is counted like a risky one."""
        check_tool_call_id(tool_call_id)
        evaluation = self._calls.evaluate_call(call)
        self._core.append(
            ConfirmationDeclinedData(
                reason=reason,
                **_call_fields(call, evaluation),
                tool_call_id=tool_call_id,
                rule_ids=list(evaluation.rule_ids[:16]) or None,
                preview=evaluation.preview if evaluation.preview and self._core.preview else None,
                **_late(late),
            )
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
        """Audit the operator's (or the shim's) no to a call: :meth:`decline_call`."""
        return self.decline_call(
            self._calls.classify(tool_name, tool_input, cwd),
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
        evaluation = self._calls.evaluate_call(call)
        if reason == "stopped" and evaluation.verdict == "allow":
            self.blocked_call(call, "stopped", tool_call_id=tool_call_id)
        result = self._calls.record_call(
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
        late: Late,
        tool_call_id: str | None = None,
        operator_reason: str | None = None,
    ) -> bool:
        """Append a ``confirmation.declined`` the shim could not deliver when it happened.

        ``late``: where the shim kept it, when it happened, its session. The call is
        classified now (the fingerprint is computed here, never taken from the shim); a
        call the policy now allows has no fingerprint and is not appended (returns False).
        """
        check_tool_call_id(tool_call_id)
        call = self._calls.classify(tool_name, tool_input, cwd)
        if reason in ("sidecar-unavailable", "sandbox-unavailable"):
            # Blocked whatever the policy says of it now: counted, local-safe or not.
            self.blocked_call(call, reason, tool_call_id=tool_call_id, late=late)
            return True
        evaluation = self._calls.evaluate_call(call)
        fp = evaluation.fingerprint
        if fp is None:
            return False
        self._core.append(
            ConfirmationDeclinedData(
                reason=reason,
                **fingerprint_fields(fp),
                tool_call_id=tool_call_id,
                preview=evaluation.preview if evaluation.preview and self._core.preview else None,
                operator_reason=operator_reason_text(operator_reason),
                **late.fields(),
            )
        )
        return True

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
        :meth:`input_changed_call`."""
        check_tool_call_id(tool_call_id)
        self.input_changed_call(
            self._calls.classify(tool_name, tool_input, cwd), tool_call_id=tool_call_id, late=late
        )

    def input_changed_call(
        self,
        call: ClassifiedCall,
        *,
        tool_call_id: str | None = None,
        late: Late | None = None,
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
        self._core.append(
            ConfirmationDeclinedData(
                reason="input-changed-after-decision",
                **fingerprint_fields(fp),
                tool_call_id=tool_call_id,
                **_late(late),
            )
        )


def _call_fields(call: ClassifiedCall, evaluation: Evaluation) -> dict[str, Any]:
    """What ran or was stopped, as an event model's keyword arguments: its fingerprint, or
    (a call nobody is asked about has none) its kind, name and payload hash."""
    if evaluation.fingerprint is not None:
        return fingerprint_fields(evaluation.fingerprint)
    return {
        "action_kind": evaluation.action_kind,
        "tool_name": call.name,
        "payload_hash": payload_hash(call.input),
    }
