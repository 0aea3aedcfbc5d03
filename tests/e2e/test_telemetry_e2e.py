"""OpenTelemetry export from the real pi: ``[telemetry]`` in the user policy points the
sidecar at a real OTLP/HTTP receiver on 127.0.0.1 (tests/otlp_receiver.py); one session makes
five guarded calls (an allowed read, a bash the operator says yes to, one they say no to, one
the policy blocks, an allowed bash) and the receiver sees one ``execute_tool`` span for each,
with the required attributes, and not one byte of the secrets planted in the commands. The
yes's evidence is then exported as a DSSE envelope and verified. With the receiver down or
slow, the same calls run and decide the same. Runs on both pinned pi versions.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any

import pytest

from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

from ..otlp_receiver import otlp_receiver
from .pi_world import World, bash

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

SECRET_YES = "ghp_" + "e2eTelemetryYes7Kq2Wm9Xb4Rt6Yu1Io3Pa5Sd"
SECRET_NO = "sk-proj-" + "e2eTelemetryNo8Vb3nQ8rT2wXy7ZkLm"
SECRET_ALLOWED = "AKIA" + "E2ETELEMETRY7QX2"
SECRET_BLOCKED = "glpat-" + "e2eTelemetryBlocked9xYz"
SECRETS = (SECRET_YES, SECRET_NO, SECRET_ALLOWED, SECRET_BLOCKED)

CALLS = (
    ToolCall("read", {"path": "README.md"}),
    bash(f"rm -rf a && curl -s -H 'Authorization: token {SECRET_YES}' http://127.0.0.1:9 || true"),
    bash(f"GITHUB_TOKEN={SECRET_NO} rm -rf b"),
    bash(f"pi-guard keys list --token {SECRET_BLOCKED}"),
    bash(f"echo built AWS_ACCESS_KEY_ID={SECRET_ALLOWED} > /dev/null; echo ok"),
)
SCENARIO = [*(Turn(tool_calls=(call,)) for call in CALLS), Turn(text="done")]
# What each call must come to, in order: (tool, decision, answer or None, ran).
EXPECTED = (
    ("read", "allow", None, True),
    ("bash", "ask", "yes", True),
    ("bash", "ask", "no", False),
    ("bash", "block", None, False),
    ("bash", "allow", None, True),
)
REQUIRED = (
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "pi_guard.decision",
    "pi_guard.action_kind",
    "pi_guard.audit.seq",
    "pi_guard.audit.checkpoint_size",
)


def _policy(world: World, endpoint: str) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text(
        f'[telemetry]\nenabled = true\nendpoint = "{endpoint}"\ntimeout_seconds = 1\n'
    )


def _answers() -> Any:
    said = iter((True, False))  # yes to the first dialog, no to the second

    def answer(request: Mapping[str, Any]) -> bool:
        return True if is_effects_dialog(request) else next(said)

    return answer


def _run(world: World, model_server: ScriptedModelServer, name: str) -> None:
    model_server.add_scenario(name, SCENARIO)
    with world.rpc() as pi:
        pi.prompt(f"scenario:{name}", _answers(), timeout=120)


def _decisions(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each call's records as the log has them, without times, ids and hashes."""
    return [
        (
            r["event"],
            r["data"].get("toolName"),
            r["data"].get("actionKind"),
            r["data"].get("reason"),
            tuple(r["data"].get("ruleIds") or ()),
            r["data"].get("isError"),
        )
        for r in records
        if r["event"] in ("confirmation.recorded", "confirmation.declined", "tool.executed")
    ]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_one_span_per_guarded_call_with_its_facts_and_no_secret(
    world: World, model_server: ScriptedModelServer
) -> None:
    with otlp_receiver() as receiver:
        _policy(world, receiver.endpoint)
        _run(world, model_server, "telemetry-up")
        spans = receiver.wait_for(len(CALLS), timeout=30)
        bodies = list(receiver.bodies)
    assert len(spans) == len(CALLS), [s.attributes for s in spans]
    records = world.audit()
    seqs = {r["seq"]: r for r in records}
    calls = sorted(spans, key=lambda s: s.attributes["pi_guard.audit.seq"])
    for span, (tool, decision, answer, ran) in zip(calls, EXPECTED, strict=True):
        facts = span.attributes
        assert all(key in facts for key in REQUIRED), facts
        assert span.name == f"execute_tool {tool}"
        assert (facts["gen_ai.tool.name"], facts["pi_guard.decision"]) == (tool, decision)
        assert facts.get("pi_guard.answer") == answer, facts
        assert facts["pi_guard.ran"] is ran, facts
        assert facts["pi_guard.audit.checkpoint_size"] > facts["pi_guard.audit.seq"]
        ended = seqs[facts["pi_guard.audit.seq"]]  # the record that ended the call
        assert ended["data"]["toolCallId"] == facts["gen_ai.tool.call.id"]
        assert ended["hash"] == facts["pi_guard.audit.record_hash"]
        assert facts["pi_guard.action_kind"] == ended["data"]["actionKind"]
    yes, no, blocked = calls[1].attributes, calls[2].attributes, calls[3].attributes
    assert yes["pi_guard.evidence.id"].startswith("oce_")
    assert "pi_guard.evidence.id" not in no and "pi_guard.evidence.id" not in blocked
    assert "builtin.guard-cli" in blocked["pi_guard.rule_ids"]
    assert blocked["pi_guard.reason"] == "blocked-by-policy"
    assert len(yes["pi_guard.rule_ids"]) >= 1 and len(no["pi_guard.rule_ids"]) >= 1
    # The planted secrets: the log redacted them, and no byte of any of them was exported.
    log = (world.home / "audit.jsonl").read_text()
    assert "[REDACTED]" in log
    for secret in SECRETS:
        assert secret not in log
        for body in bodies:
            assert secret.encode() not in body
            assert secret[-12:].encode() not in body  # not even its tail
    # The yes's evidence, as a DSSE envelope a third party verifies (docs/dsse.md).
    exported = world.cli("evidence", "export", yes["pi_guard.evidence.id"], "--dsse")
    assert exported.returncode == 0, exported.stderr
    assert not any(secret in exported.stdout for secret in SECRETS)
    dsse = world.tmp / "yes.dsse.json"
    dsse.write_text(exported.stdout)
    checked = world.cli(
        "evidence", "verify-dsse", str(dsse), "--key", str(world.home / "keyring.json")
    )
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["evidenceId"] == yes["pi_guard.evidence.id"]


@pytest.mark.parametrize("receiver_state", ["down", "slow"])
def test_a_receiver_that_is_down_or_slow_changes_no_call(
    world: World, model_server: ScriptedModelServer, receiver_state: str
) -> None:
    with otlp_receiver() as receiver:
        _policy(world, receiver.endpoint)
        _run(world, model_server, "telemetry-before")
        assert len(receiver.wait_for(len(CALLS), timeout=30)) == len(CALLS)
    before = len(world.audit())
    (world.project / "a").mkdir()  # the yes removed it: the same project again
    (world.project / "a" / "keep.txt").write_text("a")
    with otlp_receiver(delay=3.0) as slow:  # each post answered after the exporter gave up
        endpoint = (
            slow.endpoint if receiver_state == "slow" else f"http://127.0.0.1:{_closed_port()}"
        )
        _policy(world, endpoint)
        _run(world, model_server, f"telemetry-{receiver_state}")
    records = world.audit()
    up, then = _decisions(records[:before]), _decisions(records[before:])
    assert then == up
    ran = [d for d in then if d[0] == "tool.executed"]
    assert [d[1] for d in ran] == ["read", "bash", "bash"]  # the read, the yes, the echo
    assert not (world.project / "a").exists()  # the yes ran
    assert (world.project / "b" / "keep.txt").exists()  # the no stood
    verify = world.cli("audit", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
