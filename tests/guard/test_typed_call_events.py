"""The events about one tool call, appended typed, write what their mappings wrote: the same
facts, the same bytes, with each optional field present and absent (confirmation.recorded,
confirmation.declined, evidence.consumed, evidence.rejected, tool.executed, late ones too)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import canonical_json, utc_now
from guard import Guard
from guard._effects import UnaskedTarget
from guard._evidence import RecordResult, payload_hash
from guard._operator import enrolled_credential
from tests.softauthn import SoftAuthenticator

RM = {"command": "rm -rf build"}
ENV = {"path": ".env", "content": "x"}
SPOOL_ID = "spool_" + "a" * 20
AT = "2026-11-29T01:00:00.000Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Guard]:
    with Guard.open(tmp_path / "home") as opened:
        opened.attribute("session-1", "/s/1.jsonl")
        yield opened


@pytest.fixture
def quiet(tmp_path: Path) -> Iterator[Guard]:
    """A guard without previews and without a pi session: every optional field it can leave
    out is left out."""
    with Guard.open(tmp_path / "quiet-home", preview=False) as opened:
        yield opened


def session() -> dict[str, Any]:
    return {"id": "session-1", "file": "/s/1.jsonl", "guardPid": os.getpid()}


def records(g: Guard, event: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records(g.audit.path) if r.event == event]


def same(found: dict[str, Any], before: dict[str, Any]) -> None:
    assert canonical_json(found) == canonical_json(before)


def rm_fields(project: Path) -> dict[str, Any]:
    return {
        "actionKind": "destructive",
        "toolName": "bash",
        "scope": str(project),
        "payloadHash": payload_hash(RM),
    }


def env_fields(project: Path) -> dict[str, Any]:
    return {
        "actionKind": "protected",
        "toolName": "write",
        "path": str(project / ".env"),
        "scope": str(project),
        "payloadHash": payload_hash(ENV),
    }


def times(result: RecordResult) -> dict[str, Any]:
    assert result.envelope is not None
    d = result.envelope.details
    return {"createdAtIso": d.created_at_iso, "expiresAtIso": d.expires_at_iso, "keyId": d.key_id}


# -- confirmation.recorded ----------------------------------------------------------------------


def test_recorded_with_every_field_a_dialog_gives(g: Guard, project: Path) -> None:
    said = g.record("write", ENV, project, confirmed=True, tool_call_id="call-1",
                    origin="runtime-ui-confirm", approver="web")  # fmt: skip
    (found,) = records(g, "confirmation.recorded")
    same(found, {
        "evidenceId": said.evidence_id,
        "origin": "runtime-ui-confirm",
        **env_fields(project),
        "toolCallId": "call-1",
        **times(said),
        "preview": str(project / ".env"),
        "approver": "web",
        "session": session(),
    })  # fmt: skip


def test_recorded_with_nothing_optional(quiet: Guard, project: Path) -> None:
    said = quiet.record("bash", RM, project, confirmed=True)
    (found,) = records(quiet, "confirmation.recorded")
    same(found, {
        "evidenceId": said.evidence_id,
        "origin": "operator-contract-review",
        **rm_fields(project),
        **times(said),
    })  # fmt: skip


def test_recorded_with_the_operators_passkey_names_its_credential(g: Guard, project: Path) -> None:
    key = SoftAuthenticator()
    challenge = secrets.token_bytes(32)
    credential = enrolled_credential(key.register(challenge), challenge=challenge,
                                     rp_id=key.rp_id, origin=key.origin, label="key",
                                     now=utc_now())  # fmt: skip
    g.operators.enroll(credential)
    reservation = g.operators.reserve("bash", RM, project, tool_call_id="c1")
    assert reservation is not None
    signature = key.sign_details(reservation.statement)
    said = g.record("bash", RM, project, confirmed=True, tool_call_id="c1",
                    origin="runtime-ui-confirm", signed=(reservation, signature))  # fmt: skip
    (found,) = records(g, "confirmation.recorded")
    same(found, {
        "evidenceId": said.evidence_id,
        "origin": "runtime-ui-confirm",
        **rm_fields(project),
        "toolCallId": "c1",
        **times(said),
        "preview": "rm -rf build",
        "operatorCredential": credential.credential_id,
        "session": session(),
    })  # fmt: skip


# -- confirmation.declined ----------------------------------------------------------------------


def test_declined_by_the_operator_with_a_reason(g: Guard, project: Path) -> None:
    g.decline("bash", RM, project, "declined", tool_call_id="call-2",
              operator_reason="not  the build\nplease", approver="cli")  # fmt: skip
    (found,) = records(g, "confirmation.declined")
    same(found, {
        "reason": "declined",
        **rm_fields(project),
        "toolCallId": "call-2",
        "preview": "rm -rf build",
        "approver": "cli",
        "ruleIds": ["builtin.rm"],
        "operatorReason": "not the build please",
        "session": session(),
    })  # fmt: skip


def test_declined_with_nothing_optional(quiet: Guard, project: Path) -> None:
    quiet.record("bash", RM, project, confirmed=False, decline_reason="timeout",
                 operator_reason="   ")  # fmt: skip
    (found,) = records(quiet, "confirmation.declined")
    same(found, {"reason": "timeout", **rm_fields(project), "ruleIds": ["builtin.rm"]})


def test_a_call_the_policy_blocks_is_declined_blocked_by_policy(g: Guard, project: Path) -> None:
    call = {"command": "rm -rf /"}
    g.record("bash", call, project, confirmed=True, tool_call_id="call-3")
    (found,) = records(g, "confirmation.declined")
    assert found["reason"] == "blocked-by-policy"
    assert found["ruleIds"][-1] == "builtin.rm" and len(found["ruleIds"]) == 7
    same(found, {
        "reason": "blocked-by-policy",
        **rm_fields(project),
        "payloadHash": payload_hash(call),
        "toolCallId": "call-3",
        "preview": "rm -rf /",
        "ruleIds": found["ruleIds"],
        "session": session(),
    })  # fmt: skip


def test_blocked_without_a_fingerprint_and_stopped(g: Guard, quiet: Guard, project: Path) -> None:
    ls = {"command": "ls"}
    g.blocked("bash", ls, project, "sidecar-unavailable", tool_call_id="call-4")
    quiet.blocked("bash", ls, project, "sandbox-unavailable")
    g.decline("bash", ls, project, "stopped", tool_call_id="call-5")
    first, stopped = records(g, "confirmation.declined")
    same(first, {
        "reason": "sidecar-unavailable",
        "actionKind": "local-safe",
        "toolName": "bash",
        "payloadHash": payload_hash(ls),
        "toolCallId": "call-4",
        "preview": "ls",
        "session": session(),
    })  # fmt: skip
    same(stopped, {**first, "reason": "stopped", "toolCallId": "call-5"})
    (bare,) = records(quiet, "confirmation.declined")
    same(bare, {
        "reason": "sandbox-unavailable",
        "actionKind": "local-safe",
        "toolName": "bash",
        "payloadHash": payload_hash(ls),
    })  # fmt: skip


def test_input_changed_is_declined_as_protected(g: Guard, quiet: Guard, project: Path) -> None:
    g.input_changed("bash", RM, project, tool_call_id="call-6")
    quiet.input_changed("bash", RM, project)
    protected = {**rm_fields(project), "actionKind": "protected"}
    (found,) = records(g, "confirmation.declined")
    same(found, {
        "reason": "input-changed-after-decision",
        **protected,
        "toolCallId": "call-6",
        "session": session(),
    })  # fmt: skip
    (bare,) = records(quiet, "confirmation.declined")
    same(bare, {"reason": "input-changed-after-decision", **protected})


def spooled(project: Path, kind: str, n: int, **more: Any) -> dict[str, Any]:
    return {"kind": kind, "id": f"spool_{n:020d}", "at": AT, "toolName": "bash",
            "input": RM, "cwd": str(project), **more}  # fmt: skip


def test_declines_delivered_late_name_the_session_they_happened_in(g: Guard, project: Path) -> None:
    reply = g.spool.replay([
        spooled(project, "declined", 1, reason="declined", toolCallId="call-7",
                operatorReason="no", sessionId="session-0", sessionFile="/s/0.jsonl"),
        spooled(project, "declined", 2, reason="confirmed-unrecorded"),
        spooled(project, "declined", 3, reason="sidecar-unavailable", sessionId="session-0"),
        spooled(project, "declined", 4, reason="input-changed-after-decision"),
    ])  # fmt: skip
    assert len(reply.delivered) == 4
    with_all, bare, blocked, changed = records(g, "confirmation.declined")
    late = {"deliveredLate": True, "occurredAtIso": AT}
    same(with_all, {
        "reason": "declined",
        **rm_fields(project),
        "toolCallId": "call-7",
        "preview": "rm -rf build",
        "operatorReason": "no",
        **late,
        "spoolId": f"spool_{1:020d}",
        "session": {"id": "session-0", "file": "/s/0.jsonl"},
    })  # fmt: skip
    same(bare, {"reason": "confirmed-unrecorded", **rm_fields(project),
                "preview": "rm -rf build", **late, "spoolId": f"spool_{2:020d}"})  # fmt: skip
    same(blocked, {"reason": "sidecar-unavailable", **rm_fields(project),
                   "preview": "rm -rf build", "ruleIds": ["builtin.rm"], **late,
                   "spoolId": f"spool_{3:020d}", "session": {"id": "session-0"}})  # fmt: skip
    same(changed, {"reason": "input-changed-after-decision",
                   **{**rm_fields(project), "actionKind": "protected"},
                   **late, "spoolId": f"spool_{4:020d}"})  # fmt: skip
    assert g.session_counts["declined"] == g.session_counts["blocked"] == 0


# -- evidence.consumed, evidence.rejected -------------------------------------------------------


def test_consumed_and_rejected_with_and_without_their_ids(g: Guard, project: Path) -> None:
    said = g.record("bash", RM, project, confirmed=True, tool_call_id="call-8")
    assert said.envelope is not None
    envelope = said.envelope.model_dump(mode="json")
    g.consume(envelope, "bash", RM, project, tool_call_id="call-8")
    g.consume(envelope, "bash", RM, project, tool_call_id="call-8")
    g.consume(None, "bash", RM, project)
    g.consume(envelope, "bash", {"command": "ls"}, project, tool_call_id="call-8")
    (consumed,) = records(g, "evidence.consumed")
    same(consumed, {"evidenceId": said.evidence_id, **rm_fields(project),
                    "toolCallId": "call-8", "session": session()})  # fmt: skip
    replayed, missing, safe = records(g, "evidence.rejected")
    same(replayed, {
        "evidenceId": said.evidence_id,
        "decision": "consumed",
        "reasons": ["replay"],
        **rm_fields(project),
        "toolCallId": "call-8",
        "session": session(),
    })  # fmt: skip
    same(missing, {"decision": "missing", "reasons": ["no-evidence"], **rm_fields(project),
                   "session": session()})  # fmt: skip
    assert safe["decision"] == "mismatch" and safe["reasons"]
    same(safe, {"evidenceId": said.evidence_id, "decision": "mismatch",
                "reasons": safe["reasons"], "toolName": "bash", "toolCallId": "call-8",
                "session": session()})  # fmt: skip


def test_consumed_without_a_call_id_or_a_session(quiet: Guard, project: Path) -> None:
    said = quiet.record("write", ENV, project, confirmed=True)
    assert said.envelope is not None
    quiet.consume(said.envelope.model_dump(mode="json"), "write", ENV, project)
    (consumed,) = records(quiet, "evidence.consumed")
    same(consumed, {"evidenceId": said.evidence_id, **env_fields(project)})


# -- tool.executed ------------------------------------------------------------------------------


def test_executed_with_evidence_rules_and_targets_that_ran_unasked(g: Guard, project: Path) -> None:
    unasked = [UnaskedTarget(path=str(project / "build"), reason="regenerable"),
               UnaskedTarget(path=str(project / "x"), reason="missing")]  # fmt: skip
    g.tool_executed("call-9", "bash", RM, project, is_error=True, evidence_id="ev_1",
                    unasked=unasked)  # fmt: skip
    (found,) = records(g, "tool.executed")
    same(found, {
        "toolCallId": "call-9",
        "toolName": "bash",
        "isError": True,
        **rm_fields(project),
        "evidenceId": "ev_1",
        "ruleIds": ["builtin.rm"],
        "preview": "rm -rf build",
        "ranUnasked": [
            {"path": str(project / "build"), "reason": "regenerable"},
            {"path": str(project / "x"), "reason": "missing"},
        ],
        "session": session(),
    })  # fmt: skip


def test_executed_local_safe_says_only_what_ran(g: Guard, quiet: Guard, project: Path) -> None:
    ls = {"command": "ls"}
    unasked = [UnaskedTarget(path=str(project), reason="clean")]
    g.tool_executed("call-10", "bash", ls, project, is_error=False, unasked=unasked)
    quiet.tool_executed("call-11", "bash", ls, project, is_error=False)
    (found,) = records(g, "tool.executed")
    bare = {"toolCallId": "call-10", "toolName": "bash", "isError": False,
            "actionKind": "local-safe", "payloadHash": payload_hash(ls)}  # fmt: skip
    same(found, {**bare, "preview": "ls", "session": session()})
    (quiet_found,) = records(quiet, "tool.executed")
    same(quiet_found, {**bare, "toolCallId": "call-11"})


def test_executed_delivered_late(g: Guard, project: Path) -> None:
    g.spool.replay([
        spooled(project, "executed", 5, toolCallId="call-12", isError=False,
                evidenceId="ev_2", sessionId="session-0"),
        spooled(project, "executed", 6, toolCallId="call-13", isError=True),
    ])  # fmt: skip
    with_all, bare = records(g, "tool.executed")
    fields = {"toolName": "bash", **rm_fields(project), "ruleIds": ["builtin.rm"],
              "preview": "rm -rf build", "deliveredLate": True, "occurredAtIso": AT}  # fmt: skip
    same(with_all, {**fields, "toolCallId": "call-12", "isError": False, "evidenceId": "ev_2",
                    "spoolId": f"spool_{5:020d}", "session": {"id": "session-0"}})  # fmt: skip
    same(bare, {**fields, "toolCallId": "call-13", "isError": True,
                "spoolId": f"spool_{6:020d}"})  # fmt: skip
    assert g.session_counts["executed"] == 0
