"""One guarded call from its audit records: the decision, the answer and how it ended, as
the facts of one ``execute_tool`` span (GenAI semantic conventions, see
:data:`guard._telemetry.model.SEMCONV_VERSION`).

A call's records arrive one by one as the log takes them: ``confirmation.recorded`` (a yes,
or a grant's) waits for the call's end; ``tool.executed`` (it ran) and
``confirmation.declined`` (it did not) end it. Every attribute is taken from the records as
written, after the log's redaction: nothing here sees a tool's input, so no secret, file
contents or argument the log would redact can be exported. Without ``details`` the
redacted preview, the path and the scope stay on the machine too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from audit.wire import AuditRecord
from guard._telemetry.model import AttributeValue, CallSpan

__all__ = ["CALL_EVENTS", "MAX_OPEN_CALLS", "CallFolder"]

CALL_EVENTS = frozenset({"confirmation.recorded", "confirmation.declined", "tool.executed"})
MAX_OPEN_CALLS = 1024
"""Calls with a yes recorded whose end has not come: past this, the oldest is exported as
it stands (its end unknown)."""

_BLOCKS = ("blocked-by-policy", "sidecar-unavailable", "sandbox-unavailable")
_ANSWERS = {"declined": "no", "timeout": "timeout", "stopped": "no"}
_P = "pi_guard."


def _call_key(data: Mapping[str, Any]) -> str | None:
    call = data.get("toolCallId")
    return call if isinstance(call, str) else None


class CallFolder:
    """Folds audit records into finished calls (not thread-safe: the caller holds a lock)."""

    def __init__(self, *, details: bool = False) -> None:
        self._details = details
        self._open: OrderedDict[str, tuple[int, AuditRecord]] = OrderedDict()

    def fold(self, record: AuditRecord, now_ns: int) -> list[CallSpan]:
        """The calls ``record`` finishes (none, one, or one pushed out of the open set)."""
        if record.event not in CALL_EVENTS:
            return []
        key = _call_key(record.data)
        if record.event == "confirmation.recorded":
            if key is None:
                return [self._span(None, record, now_ns, now_ns)]
            out: list[CallSpan] = []
            if key in self._open:
                out.append(self._ended_unknown(key, now_ns))
            self._open[key] = (now_ns, record)
            if len(self._open) > MAX_OPEN_CALLS:
                out.append(self._ended_unknown(next(iter(self._open)), now_ns))
            return out
        opened = self._open.pop(key, None) if key is not None else None
        start, decided = opened if opened is not None else (now_ns, None)
        return [self._span(decided, record, start, now_ns)]

    def drain(self, now_ns: int) -> list[CallSpan]:
        """Every call still open, exported as it stands (the session ends)."""
        return [self._ended_unknown(key, now_ns) for key in list(self._open)]

    def _ended_unknown(self, key: str, now_ns: int) -> CallSpan:
        start, decided = self._open.pop(key)
        return self._span(decided, None, start, now_ns)

    # -- the span's facts ------------------------------------------------------------------

    def _span(
        self, decided: AuditRecord | None, ended: AuditRecord | None, start: int, end: int
    ) -> CallSpan:
        last = ended or decided
        assert last is not None
        data = last.data
        tool = str(data.get("toolName", ""))
        attrs: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
        }
        call = _call_key(data)
        if call is not None:
            attrs["gen_ai.tool.call.id"] = call
        error = self._decision(decided, ended, attrs)
        for record in (decided, ended):
            if record is not None:
                self._common(record.data, attrs)
        if decided is not None:
            attrs[_P + "audit.decision_seq"] = decided.seq
        attrs[_P + "audit.seq"] = last.seq
        attrs[_P + "audit.record_hash"] = last.hash
        attrs[_P + "audit.checkpoint_size"] = last.seq + 1
        if error is not None:
            attrs["error.type"] = error
        return CallSpan(f"execute_tool {tool}", start, end, attrs, error)

    def _decision(
        self,
        decided: AuditRecord | None,
        ended: AuditRecord | None,
        attrs: dict[str, AttributeValue],
    ) -> str | None:
        """The decision, the answer and how the call ended; the span's ``error.type``."""
        if decided is not None:
            covered = decided.data.get("coveredBy")
            attrs[_P + "decision"] = "ask"
            attrs[_P + "answer"] = "grant" if isinstance(covered, Mapping) else "yes"
            if isinstance(covered, Mapping):
                attrs[_P + "grant.id"] = str(covered.get("grantId", ""))
                attrs[_P + "grant.use"] = int(covered.get("use", 0))
            attrs[_P + "evidence.id"] = str(decided.data.get("evidenceId", ""))
            attrs[_P + "evidence.operator_signed"] = "operatorCredential" in decided.data
        if ended is None:
            attrs[_P + "ended"] = False  # the call's end never reached the log
            return None
        data = ended.data
        if ended.event == "tool.executed":
            attrs.setdefault(_P + "decision", "ask" if data.get("evidenceId") else "allow")
            attrs[_P + "ran"] = True
            attrs[_P + "tool.is_error"] = bool(data.get("isError"))
            return "tool_error" if data.get("isError") else None
        reason = str(data.get("reason", ""))
        attrs[_P + "ran"] = False
        attrs[_P + "reason"] = reason
        if decided is None:
            if reason in _BLOCKS or (reason == "stopped" and "approver" not in data):
                attrs[_P + "decision"] = "block"
            else:
                attrs[_P + "decision"] = "ask"
                if reason in _ANSWERS:
                    attrs[_P + "answer"] = _ANSWERS[reason]
        return reason or "refused"

    def _common(self, data: Mapping[str, Any], attrs: dict[str, AttributeValue]) -> None:
        """What either record of the call says of it (the later one wins)."""
        if isinstance(data.get("actionKind"), str):
            attrs[_P + "action_kind"] = data["actionKind"]
        rules = data.get("ruleIds")
        if isinstance(rules, list) and rules:
            attrs[_P + "rule_ids"] = tuple(str(r) for r in rules)
        if isinstance(data.get("evidenceId"), str):
            attrs[_P + "evidence.id"] = data["evidenceId"]
        if isinstance(data.get("approver"), str):
            attrs[_P + "approver"] = data["approver"]
        if isinstance(data.get("payloadHash"), str):
            attrs[_P + "payload_hash"] = data["payloadHash"]
        session = data.get("session")
        if isinstance(session, Mapping) and isinstance(session.get("id"), str):
            attrs[_P + "session.id"] = session["id"]
        if data.get("deliveredLate"):
            attrs[_P + "delivered_late"] = True
        if self._details:
            for key, name in (("preview", "preview"), ("path", "path"), ("scope", "scope")):
                if isinstance(data.get(key), str):
                    attrs[_P + name] = data[key]
