"""Typed events: ``AuditLog.append`` takes an event's data model, which names its event, and
writes the very bytes the same facts as a camelCase mapping write (the hash chain, the
committed vectors and every verifier depend on them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from audit import UnknownEventError, UsageError
from audit.log import AuditLog
from audit.wire import (
    EVENT_MODELS,
    ApprovalRefusedData,
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    EffectsResolvedData,
    EffectsReviewedData,
    EventData,
    EvidenceRejectedData,
    GrantExpiredData,
    GrantRevokedData,
    GrantUsedData,
    GrantUseRef,
    HeldEffectData,
    KeyGeneratedData,
    KeyRetiredData,
    KeyRotatedData,
    NetworkRefusedData,
    PlannerReportedData,
    SessionEndedData,
    SessionStartedData,
    ToolExecutedData,
    UnaskedTargetData,
    canonical_json,
    event_of,
)
from tests.audit.audit_testkit import FixedSigner, executed, keyring

SESSION = {"id": "session-1", "file": "/s/1.jsonl", "guardPid": 4242}
HASH = "sha256:" + "ab" * 32
DIGEST = "sha256:" + "cd" * 32
GRANT = "grant_" + "g" * 22
EVIDENCE = "oce_" + "e" * 22
AT = "2026-11-29T01:00:00.000Z"
KEY_A = FixedSigner(bytes(range(32))).key_id
KEY_B = FixedSigner(bytes(range(1, 33))).key_id

# The same facts twice: as the typed event, and as the mapping callers wrote before.
PAIRS: list[tuple[EventData, str, dict[str, Any]]] = [
    (
        SessionStartedData(
            sandbox="sandboxed",
            scope="/work/project",
            sidecar_restarted=False,
            policy_digest="sha256:" + "ab" * 32,
            mode="tui",
            network="allowlist",
            pi_version="0.70.2",
            tools=[{"name": "bash", "source": "builtin"}, {"name": "q", "source": "sdk"}],
            session=SESSION,
        ),
        "session.started",
        {
            "sandbox": "sandboxed",
            "scope": "/work/project",
            "sidecarRestarted": False,
            "policyDigest": "sha256:" + "ab" * 32,
            "mode": "tui",
            "network": "allowlist",
            "piVersion": "0.70.2",
            "tools": [{"name": "bash", "source": "builtin"}, {"name": "q", "source": "sdk"}],
            "session": SESSION,
        },
    ),
    (
        SessionStartedData(
            sandbox="unavailable", scope="/p", reason="no-bwrap", message="bwrap is missing"
        ),
        "session.started",
        {
            "sandbox": "unavailable",
            "scope": "/p",
            "sidecarRestarted": False,
            "reason": "no-bwrap",
            "message": "bwrap is missing",
        },
    ),
    (
        SessionEndedData(
            reason="shutdown", asked=3, confirmed=2, declined=1, blocked=4, executed=5, covered=1
        ),
        "session.ended",
        {
            "reason": "shutdown",
            "asked": 3,
            "confirmed": 2,
            "declined": 1,
            "blocked": 4,
            "executed": 5,
            "covered": 1,
        },
    ),
    (
        ApprovalRefusedData(reason="stale", approver="web", approval_id="appr_1", count=3),
        "approval.refused",
        {"reason": "stale", "approver": "web", "approvalId": "appr_1", "count": 3},
    ),
    (
        ApprovalRefusedData(reason="other-user", approver="cli"),
        "approval.refused",
        {"reason": "other-user", "approver": "cli"},
    ),
    (
        NetworkRefusedData(host="example.com", port=443, reason="not-allowed", scope="/p"),
        "network.refused",
        {"host": "example.com", "port": 443, "reason": "not-allowed", "scope": "/p"},
    ),
    (KeyGeneratedData(key_id=KEY_A), "key.generated", {"keyId": KEY_A}),
    (
        KeyRotatedData(old_key_id=KEY_A, new_key_id=KEY_B),
        "key.rotated",
        {"oldKeyId": KEY_A, "newKeyId": KEY_B},
    ),
    (
        KeyRetiredData(
            key_id=KEY_A,
            new_key_id=KEY_B,
            retired_at_iso="2026-11-29T01:00:00.000Z",
            reason="key-file-missing",
        ),
        "key.retired",
        {
            "keyId": KEY_A,
            "newKeyId": KEY_B,
            "retiredAtIso": "2026-11-29T01:00:00.000Z",
            "reason": "key-file-missing",
        },
    ),
    (
        PlannerReportedData(planner="channel", decision="local", reasons=["no-network"]),
        "planner.reported",
        {"planner": "channel", "decision": "local", "reasons": ["no-network"]},
    ),
    (
        ToolExecutedData.model_validate(executed("typed")),
        "tool.executed",
        executed("typed"),
    ),
    (
        ToolExecutedData(
            tool_call_id="c1",
            tool_name="bash",
            is_error=False,
            action_kind="destructive",
            payload_hash=HASH,
            scope="/p",
            rule_ids=["builtin.rm"],
            ran_unasked=[UnaskedTargetData(path="/p/build", reason="regenerable")],
            delivered_late=True,
            spool_id="spool_" + "s" * 20,
            occurred_at_iso=AT,
        ),
        "tool.executed",
        {
            "toolCallId": "c1",
            "toolName": "bash",
            "isError": False,
            "actionKind": "destructive",
            "payloadHash": HASH,
            "scope": "/p",
            "ruleIds": ["builtin.rm"],
            "ranUnasked": [{"path": "/p/build", "reason": "regenerable"}],
            "deliveredLate": True,
            "spoolId": "spool_" + "s" * 20,
            "occurredAtIso": AT,
        },
    ),
    (
        ConfirmationRecordedData(
            evidence_id=EVIDENCE,
            origin="runtime-grant",
            action_kind="destructive",
            tool_name="bash",
            scope="/p",
            payload_hash=HASH,
            created_at_iso=AT,
            expires_at_iso=AT,
            key_id=KEY_A,
            covered_by=GrantUseRef(grant_id=GRANT, use=2),
        ),
        "confirmation.recorded",
        {
            "evidenceId": EVIDENCE,
            "origin": "runtime-grant",
            "actionKind": "destructive",
            "toolName": "bash",
            "scope": "/p",
            "payloadHash": HASH,
            "createdAtIso": AT,
            "expiresAtIso": AT,
            "keyId": KEY_A,
            "coveredBy": {"grantId": GRANT, "use": 2},
        },
    ),
    (
        ConfirmationDeclinedData(
            reason="declined",
            action_kind="protected",
            tool_name="write",
            path="/p/.env",
            payload_hash=HASH,
            operator_reason="not that one",
            approver="web",
        ),
        "confirmation.declined",
        {
            "reason": "declined",
            "actionKind": "protected",
            "toolName": "write",
            "path": "/p/.env",
            "payloadHash": HASH,
            "operatorReason": "not that one",
            "approver": "web",
        },
    ),
    (
        EvidenceRejectedData(decision="missing", reasons=["no-evidence"], tool_name="bash"),
        "evidence.rejected",
        {"decision": "missing", "reasons": ["no-evidence"], "toolName": "bash"},
    ),
    (
        EffectsReviewedData(
            layer="layer_0123456789",
            scope="/p",
            decision="held",
            digest=DIGEST,
            counts={"deleted": 1},
            held=[
                HeldEffectData(path="a.txt", kind="deleted", reason="untracked", files=1, bytes=3)
            ],
            held_total=1,
        ),
        "effects.reviewed",
        {
            "layer": "layer_0123456789",
            "scope": "/p",
            "decision": "held",
            "digest": DIGEST,
            "counts": {"deleted": 1},
            "held": [
                {"path": "a.txt", "kind": "deleted", "reason": "untracked", "files": 1, "bytes": 3}
            ],
            "heldTotal": 1,
        },
    ),
    (
        EffectsReviewedData(layer="layer_0123456789", scope="/p", decision="empty"),
        "effects.reviewed",
        {
            "layer": "layer_0123456789",
            "scope": "/p",
            "decision": "empty",
            "counts": {},
            "held": [],
            "heldTotal": 0,
        },
    ),
    (
        EffectsResolvedData(
            layer="layer_0123456789", decision="discarded", digest=DIGEST, reason="timeout"
        ),
        "effects.resolved",
        {
            "layer": "layer_0123456789",
            "decision": "discarded",
            "digest": DIGEST,
            "reason": "timeout",
        },
    ),
    (
        GrantUsedData(grant_id=GRANT, use=1, evidence_id=EVIDENCE, tool_call_id="c2"),
        "grant.used",
        {"grantId": GRANT, "use": 1, "evidenceId": EVIDENCE, "toolCallId": "c2"},
    ),
    (
        GrantRevokedData(grant_id=GRANT, by="guard-command", uses=3),
        "grant.revoked",
        {"grantId": GRANT, "by": "guard-command", "uses": 3},
    ),
    (
        GrantExpiredData(grant_id=GRANT, reason="session-ended", uses=0),
        "grant.expired",
        {"grantId": GRANT, "reason": "session-ended", "uses": 0},
    ),
]


@pytest.fixture
def log(tmp_path: Path) -> Any:
    signer = FixedSigner(bytes(range(32)))
    with AuditLog.open(tmp_path / "audit.jsonl", signer, keyring(signer)) as opened:
        yield opened


@pytest.mark.parametrize(("typed", "event", "mapping"), PAIRS, ids=[p[1] for p in PAIRS])
def test_a_typed_event_writes_the_bytes_its_mapping_writes(
    log: AuditLog, typed: EventData, event: str, mapping: dict[str, Any]
) -> None:
    assert event_of(typed) == (event, mapping)
    as_mapping = log.append(event, mapping)
    as_typed = log.append(typed)
    assert as_typed.event == as_mapping.event == event
    assert canonical_json(as_typed.data) == canonical_json(as_mapping.data)
    lines = log.path.read_bytes().splitlines()
    # Each line is the canonical record; with the sequence number, time and previous hash
    # taken out, the two lines are the same bytes.
    assert _without_place(lines[-1]) == _without_place(lines[-2])


def test_the_bytes_of_a_typed_session_started_are_pinned(log: AuditLog) -> None:
    record = log.append(PAIRS[0][0])
    assert canonical_json(record.data) == (
        b'{"mode":"tui","network":"allowlist","piVersion":"0.70.2","policyDigest":"sha256:'
        + b"ab" * 32
        + b'","sandbox":"sandboxed","scope":"/work/project","session":{"file":"/s/1.jsonl",'
        b'"guardPid":4242,"id":"session-1"},"sidecarRestarted":false,"tools":[{"name":"bash",'
        b'"source":"builtin"},{"name":"q","source":"sdk"}]}'
    )


def test_a_typed_event_is_redacted_like_its_mapping(log: AuditLog) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    facts = {**executed("redacted"), "preview": f"curl -H 'Authorization: token {secret}'"}
    record = log.append(ToolExecutedData.model_validate(facts))
    assert secret not in canonical_json(record.data).decode()
    assert record.data == log.append("tool.executed", facts).data


def test_every_event_model_names_its_event() -> None:
    names = {model: event for event, model in EVENT_MODELS.items()}
    assert len(names) == len(EVENT_MODELS)  # one model, one event


def test_a_model_that_is_no_event_is_refused(log: AuditLog) -> None:
    class NotAnEvent(BaseModel):
        reason: str

    with pytest.raises(UnknownEventError):
        log.append(NotAnEvent(reason="x"))  # type: ignore[call-overload]
    with pytest.raises(UnknownEventError):
        log.append(7)  # type: ignore[call-overload]


def test_a_typed_event_with_data_or_a_name_without_is_a_usage_error(log: AuditLog) -> None:
    typed = PAIRS[3][0]
    with pytest.raises(UsageError):
        log.append(typed, {"reason": "stale"})  # type: ignore[call-overload]
    with pytest.raises(UsageError):
        log.append("approval.refused")  # type: ignore[call-overload]
    assert log.path.read_bytes().count(b"\n") == 1  # log.created only


def _without_place(line: bytes) -> bytes:
    body = json.loads(line)
    for key in ("seq", "ts", "prev", "hash"):
        body.pop(key)
    return canonical_json(body)
