"""The Python facade: evaluate, record, consume, audit, rotate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

import guard
import guard.evidence
from audit.tlog import open_checkpoint
from audit.verify import read_records
from guard import BadInputError, Guard, TtlError
from guard._facade.guard import operator_reason_text

RM = {"command": "rm -rf build"}


@pytest.fixture
def g(tmp_path: Path) -> Any:
    with Guard.open(tmp_path / "home") as opened:
        yield opened


def events(g: Guard) -> list[str]:
    return [r.event for r in read_records(g.audit.path)]


def test_home_defaults_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert guard.default_home() == tmp_path / "agent" / "operator-guard"
    monkeypatch.setenv("PI_OPERATOR_GUARD_HOME", str(tmp_path / "explicit"))
    assert guard.default_home() == tmp_path / "explicit"


def test_first_open_generates_and_audits_the_key(g: Guard) -> None:
    assert events(g)[-1] == "key.generated"
    assert g.key_created


def test_classification_minimal(g: Guard, tmp_path: Path) -> None:
    cases = {
        ("bash", "rm -rf build"): "destructive",
        ("bash", "git reset --hard HEAD~1"): "destructive",
        ("bash", "git clean -fdx"): "destructive",
        ("bash", "git push --force origin main"): "destructive",
        ("bash", "ls -la"): "local-safe",
        ("bash", "git status"): "local-safe",
    }
    for (tool, command), kind in cases.items():
        assert g.evaluate(tool, {"command": command}, tmp_path).action_kind == kind, command
    assert (
        g.evaluate("write", {"path": ".env.local", "content": "x"}, tmp_path).action_kind
        == "protected"
    )
    assert (
        g.evaluate("edit", {"path": ".git/config", "edits": []}, tmp_path).action_kind
        == "protected"
    )
    assert (
        g.evaluate("write", {"path": str(g.home / "x"), "content": ""}, tmp_path).action_kind
        == "protected"
    )
    assert (
        g.evaluate("write", {"path": "src/app.py", "content": ""}, tmp_path).action_kind
        == "local-safe"
    )
    assert g.evaluate("read", {"path": "README.md"}, tmp_path).fingerprint is None


def test_record_confirmed_is_audited_before_it_returns(g: Guard, tmp_path: Path) -> None:
    rec = g.record("bash", RM, tmp_path, confirmed=True, tool_call_id="call_1")
    assert rec.decision == "recorded" and rec.envelope is not None
    d = rec.envelope.details
    assert (d.origin, d.tool_call_id, d.action_kind) == (
        "operator-contract-review",
        "call_1",
        "destructive",
    )
    last = list(read_records(g.audit.path))[-1]
    assert last.event == "confirmation.recorded"
    assert last.data["evidenceId"] == d.evidence_id
    assert last.data["payloadHash"] == d.payload_hash
    # The audit keeps the redacted preview, never the raw input itself.
    assert last.data["preview"] == "rm -rf build"
    assert "command" not in last.data and "input" not in last.data


def test_record_runtime_origin(g: Guard, tmp_path: Path) -> None:
    rec = g.record("bash", RM, tmp_path, confirmed=True, origin="runtime-ui-confirm")
    assert rec.envelope is not None and rec.envelope.details.origin == "runtime-ui-confirm"


def test_record_declined_and_invalid(g: Guard, tmp_path: Path) -> None:
    no = g.record("bash", RM, tmp_path, confirmed=False, decline_reason="timeout")
    assert (no.decision, no.reasons, no.envelope) == ("declined", ("timeout",), None)
    assert list(read_records(g.audit.path))[-1].data["reason"] == "timeout"
    safe = g.record("bash", {"command": "ls"}, tmp_path, confirmed=True)
    assert (safe.decision, safe.reasons) == ("invalid", ("action-not-protected",))


def test_a_decline_keeps_the_operators_reason_as_one_redacted_line(
    g: Guard, tmp_path: Path
) -> None:
    g.record("bash", RM, tmp_path, confirmed=False, operator_reason="  use\n git clean  ")
    assert list(read_records(g.audit.path))[-1].data["operatorReason"] == "use git clean"
    g.record("bash", RM, tmp_path, confirmed=False, operator_reason="")
    assert "operatorReason" not in list(read_records(g.audit.path))[-1].data
    assert operator_reason_text("token=abc123 ok") == "token=[REDACTED] ok"
    assert operator_reason_text(None) is None
    with pytest.raises(BadInputError):
        operator_reason_text(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("ttl", [0, -1, 601, 10**9, True, 30.0, "30"])
def test_ttl_out_of_range_is_refused_not_clipped(g: Guard, tmp_path: Path, ttl: Any) -> None:
    with pytest.raises(TtlError):
        g.record("bash", RM, tmp_path, confirmed=True, ttl_seconds=ttl)


def test_ttl_limits_accepted(g: Guard, tmp_path: Path) -> None:
    for ttl in (1, 600):
        assert (
            g.record("bash", RM, tmp_path, confirmed=True, ttl_seconds=ttl).decision == "recorded"
        )


def test_record_refuses_bad_inputs(g: Guard, tmp_path: Path) -> None:
    with pytest.raises(BadInputError):
        g.record("bash", ["rm"], tmp_path, confirmed=True)  # type: ignore[arg-type]
    with pytest.raises(BadInputError):
        g.record("bash", RM, tmp_path, confirmed=True, tool_call_id="x" * 300)
    with pytest.raises(BadInputError):
        g.record("bash\x07", RM, tmp_path, confirmed=True)


def test_consume_is_audited_both_ways(g: Guard, tmp_path: Path) -> None:
    rec = g.record("bash", RM, tmp_path, confirmed=True)
    assert rec.envelope is not None
    env = rec.envelope.model_dump(mode="json")
    assert g.consume(env, "bash", RM, tmp_path).decision == "consumed"
    assert events(g)[-1] == "evidence.consumed"
    again = g.consume(json.dumps(env), "bash", RM, tmp_path)
    assert again.match.decision == "consumed"
    last = list(read_records(g.audit.path))[-1]
    assert (last.event, last.data["decision"], last.data["reasons"]) == (
        "evidence.rejected",
        "consumed",
        ["replay"],
    )


def test_evidence_from_before_a_rotation_verifies_within_grace(g: Guard, tmp_path: Path) -> None:
    rec = g.record("bash", RM, tmp_path, confirmed=True, ttl_seconds=120)
    assert rec.envelope is not None
    old, new = g.rotate_key()
    assert old != new and g.key_id == new
    assert (
        g.consume(rec.envelope.model_dump(mode="json"), "bash", RM, tmp_path).decision == "consumed"
    )
    assert "key.rotated" in events(g)


def test_retired_key_past_grace_is_untrusted(tmp_path: Path) -> None:
    with freeze_time("2026-11-22T01:00:00Z") as clock, Guard.open(tmp_path / "h") as g:
        rec = g.record("bash", RM, tmp_path, confirmed=True, ttl_seconds=600)
        assert rec.envelope is not None
        g.rotate_key()
        clock.tick(901)
        result = g.consume(rec.envelope.model_dump(mode="json"), "bash", RM, tmp_path)
        assert (result.match.decision, result.reasons) == ("untrusted", ("key-retired",))


def test_other_process_rotation_is_picked_up(tmp_path: Path) -> None:
    with Guard.open(tmp_path / "h") as a, Guard.open(tmp_path / "h") as b:
        _, new = b.rotate_key()
        rec = a.record("bash", RM, tmp_path, confirmed=True)
        assert rec.envelope is not None and rec.envelope.details.key_id == new


def test_tool_executed_records_the_input_as_executed(g: Guard, tmp_path: Path) -> None:
    g.tool_executed(
        "call_1",
        "bash",
        {"command": "rm -rf build2"},
        tmp_path,
        is_error=False,
        evidence_id="oce_x",
    )
    last = list(read_records(g.audit.path))[-1]
    assert last.event == "tool.executed"
    assert last.data["payloadHash"] == guard.evidence.payload_hash({"command": "rm -rf build2"})
    assert (last.data["isError"], last.data["evidenceId"], last.data["actionKind"]) == (
        False,
        "oce_x",
        "destructive",
    )


def test_plan_is_audited(g: Guard) -> None:
    result = g.plan("channel", {"preferredChannel": "guard-owned", "guardCanOwnDialog": True})
    assert result.dispatch_allowed is False
    assert events(g)[-1] == "planner.reported"


def test_audit_verifies_after_a_session(g: Guard, tmp_path: Path) -> None:
    rec = g.record("bash", RM, tmp_path, confirmed=True)
    assert rec.envelope is not None
    g.consume(rec.envelope.model_dump(mode="json"), "bash", RM, tmp_path)
    assert g.verify_audit().decision == "intact"


def test_heads_are_signed_by_the_active_key_after_rotation(tmp_path: Path) -> None:
    with Guard.open(tmp_path / "h") as a, Guard.open(tmp_path / "h") as b:
        _, new = b.rotate_key()
        a.tool_executed("call_9", "bash", {"command": "ls"}, tmp_path, is_error=False)
        result = a.verify_audit()
        assert (result.decision, result.head_key_id) == ("intact", new)
        signer = open_checkpoint(a.audit.head_path.read_bytes(), b.public_keyring().public_keys())
        assert "ed25519:" + hashlib.sha256(signer.signer.public).hexdigest() == new


@pytest.mark.parametrize("setting", ["off", "0", "false"])
def test_audit_previews_can_be_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_AUDIT_PREVIEWS", setting)
    with Guard.open(tmp_path / "h") as g:
        assert g.evaluate("bash", RM, tmp_path).preview == "rm -rf build"  # the dialog keeps it
        g.record("bash", RM, tmp_path, confirmed=True)
        g.record("bash", RM, tmp_path, confirmed=False)
        for record in read_records(g.audit.path):
            assert "preview" not in record.data


def test_audit_previews_are_redacted(g: Guard, tmp_path: Path) -> None:
    call = {"command": "API_KEY=s3cr3tvalue123 rm -rf build"}
    g.record("bash", call, tmp_path, confirmed=True)
    last = list(read_records(g.audit.path))[-1]
    assert "s3cr3tvalue123" not in json.dumps(last.data)
    assert "rm -rf build" in last.data["preview"]


def test_plan_after_another_process_rotated_verifies_the_new_head(tmp_path: Path) -> None:
    # plan() does not refresh the keys first: the appender re-reads the keyring when a
    # head names a key it did not know, instead of refusing a genuine rotation.
    with Guard.open(tmp_path / "h") as a, Guard.open(tmp_path / "h") as b:
        b.rotate_key()
        a.plan("channel", {"preferredChannel": "guard-owned", "guardCanOwnDialog": True})
        assert a.verify_audit().decision == "intact"


def test_a_forged_head_makes_the_guard_fail_closed(tmp_path: Path) -> None:
    from audit import LogIntegrityError

    home = tmp_path / "h"
    with Guard.open(home) as g:
        g.record("bash", RM, tmp_path, confirmed=True)
        g.audit.head_path.write_bytes(b"garbage")
        with pytest.raises(LogIntegrityError) as err:
            g.record("bash", RM, tmp_path, confirmed=True)
        assert err.value.kind == "head-malformed"
        assert g.verify_audit().decision == "tampered"
    with pytest.raises(LogIntegrityError):
        Guard.open(home)
