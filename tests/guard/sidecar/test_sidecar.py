"""``pi-guard serve``: every method, every error path, and the loop that never dies."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from guard._pi.session import session_envelopes
from guard._sidecar.framing import MAX_LINE_BYTES, RpcCode
from guard._sidecar.handlers.methods import serve
from guard._sidecar.text import PLANNER_TOOL_NAME
from guard.evidence import payload_hash
from planning import PLANNERS


def rpc(method: str, params: Any = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def run(home: Path, *lines: bytes, verify_only: bool = False) -> list[Any]:
    out = io.BytesIO()
    code = serve(io.BytesIO(b"".join(lines)), out, home=home, verify_only=verify_only)
    assert code == 0
    raw = out.getvalue()
    assert raw == b"" or raw.endswith(b"\n")
    return [json.loads(line) for line in raw.split(b"\n") if line]


def one(home: Path, method: str, params: Any = None) -> Any:
    (reply,) = run(home, rpc(method, params))
    assert "error" not in reply, reply
    return reply["result"]


def audit_events(home: Path) -> list[dict[str, Any]]:
    lines = (home / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "guard-home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


def call(project: Path, command: str = "rm -rf build", **extra: Any) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": command}, "cwd": str(project), **extra}


# -- methods ----------------------------------------------------------------------------------


def test_describe_offers_the_planner_tool_with_the_generated_schema(home: Path) -> None:
    result = one(home, "describe")
    assert result["protocol"] == "pi-operator-guard/sidecar/v1"
    assert {"describe", "evaluate", "record", "consume", "plan", "audit.toolExecuted"} <= set(
        result["methods"]
    )
    (tool,) = result["tools"]
    assert tool["name"] == PLANNER_TOOL_NAME
    assert tool["parameters"] == PLANNERS["channel"].input_model.model_json_schema()
    assert result["params"]["evaluate"]["additionalProperties"] is False


def test_health_reports_the_process(home: Path) -> None:
    result = one(home, "health")
    assert result["ok"] is True
    assert result["pid"] == os.getpid()
    assert result["keyId"].startswith("ed25519:")


def test_a_safe_call_is_allowed_without_a_dialog(home: Path, project: Path) -> None:
    (project / "README.md").write_text("hi\n")
    params = {"toolName": "read", "input": {"path": "README.md"}, "cwd": str(project)}
    result = one(home, "evaluate", params)
    assert result["action"] == "allow"
    assert result["dialog"] is None
    assert result["evaluation"]["actionKind"] == "local-safe"


def test_a_destructive_call_gets_a_dialog_naming_the_exact_action(
    home: Path, project: Path
) -> None:
    result = one(home, "evaluate", call(project, confirmTimeoutMs=45_000, ttlSeconds=20))
    assert result["action"] == "confirm"
    evaluation = result["evaluation"]
    assert evaluation["actionKind"] == "destructive"
    message = result["dialog"]["message"]
    details = result["dialog"]["details"]
    assert "bash" in result["dialog"]["title"]
    # On screen: the action and why; one choice away: scope, hash, expiry, timeout.
    assert "Command:  rm -rf build" in message
    assert f"Targets:  {project}/build" in message
    assert "Why:" in message
    assert f"Scope:    {project}" in details
    assert "Preview:  rm -rf build" in details
    assert evaluation["fingerprint"]["payloadHash"][:23] in details
    assert evaluation["fingerprint"]["payloadHash"][:23] not in message
    assert "20 s" in details
    assert "45 s" in details


def test_no_ui_blocks_and_is_audited(home: Path, project: Path) -> None:
    result = one(home, "evaluate", call(project, hasUi=False, toolCallId="call-1"))
    assert result["action"] == "block"
    assert result["audited"] is True
    assert "no UI" in result["blockReason"]
    declined = [e for e in audit_events(home) if e["event"] == "confirmation.declined"]
    assert declined[-1]["data"]["reason"] == "no-ui"
    assert declined[-1]["data"]["toolCallId"] == "call-1"


def test_record_then_consume_once_then_replay_is_rejected(home: Path, project: Path) -> None:
    record = one(home, "record", call(project, confirmed=True, toolCallId="call-7"))
    assert record["decision"] == "recorded"
    envelope = record["envelope"]
    assert envelope["details"]["origin"] == "runtime-ui-confirm"
    assert envelope["details"]["toolCallId"] == "call-7"
    first, second = run(
        home,
        rpc("consume", call(project, envelope=envelope, toolCallId="call-7"), 1),
        rpc("consume", call(project, envelope=json.dumps(envelope), toolCallId="call-7"), 2),
    )
    assert first["result"]["decision"] == "consumed"
    assert first["result"]["dispatchAllowed"] is False
    assert second["result"]["decision"] == "rejected"
    assert second["result"]["match"]["decision"] == "consumed"


def test_consume_against_a_different_call_is_a_mismatch(home: Path, project: Path) -> None:
    envelope = one(home, "record", call(project, confirmed=True))["envelope"]
    result = one(home, "consume", call(project, "rm -rf build/..", envelope=envelope))
    assert result["decision"] == "rejected"
    assert result["match"]["decision"] == "mismatch"


@pytest.mark.parametrize("reason", ["declined", "timeout", "sidecar-unavailable"])
def test_declines_are_audited_with_their_reason(home: Path, project: Path, reason: str) -> None:
    result = one(home, "audit.declined", call(project, reason=reason, confirmTimeoutMs=2000))
    assert result["record"]["decision"] == "declined"
    assert f"[reason: {reason}]" in result["blockReason"]
    if reason == "timeout":
        assert "2 s" in result["blockReason"]
    assert audit_events(home)[-1]["data"]["reason"] == reason


def test_record_with_confirmed_false_declines(home: Path, project: Path) -> None:
    result = one(home, "record", call(project, confirmed=False, declineReason="timeout"))
    assert result["decision"] == "declined"
    assert result["envelope"] is None


def test_plan_reports_and_authorizes_nothing(home: Path) -> None:
    result = one(home, "plan", {"planner": "channel", "params": {"guardCanOwnDialog": True}})
    assert result["dispatchAllowed"] is False
    assert result["authorization"] == "none"
    assert audit_events(home)[-1]["event"] == "planner.reported"


def test_tool_executed_is_audited_with_the_executed_input(home: Path, project: Path) -> None:
    params = call(project, "rm -rf dist", toolCallId="call-9", isError=False)
    assert one(home, "audit.toolExecuted", params) == {"audited": True}
    last = audit_events(home)[-1]
    assert last["event"] == "tool.executed"
    assert last["data"]["toolCallId"] == "call-9"
    assert last["data"]["payloadHash"] == payload_hash({"command": "rm -rf dist"})


def test_status_and_verify(home: Path, project: Path) -> None:
    one(home, "record", call(project, confirmed=True))
    status = one(home, "status")
    assert status["auditIntact"] is True
    assert status["keyId"] in status["text"]
    verify = one(home, "audit.verify")
    assert verify["decision"] == "intact"
    assert verify["reasons"] == []
    assert (verify["records"], verify["lastSeq"], verify["headSeq"]) == (3, 2, 2)
    assert verify["headKeyId"] == status["keyId"]


def test_verify_reports_a_tampered_log(home: Path, project: Path) -> None:
    one(home, "record", call(project, confirmed=True))
    log = home / "audit.jsonl"
    log.write_bytes(log.read_bytes().replace(b"rm -rf build", b"rm -rf BUILD"))
    # The full guard refuses to open on a broken chain; the verify-only monitor reports it.
    (opened,) = run(home, rpc("audit.verify"))
    # Named for what it is: the guard refuses to extend a log that does not verify.
    assert error_of(opened) == (RpcCode.GUARD_UNAVAILABLE, "audit-integrity")
    (reply,) = run(home, rpc("audit.verify"), verify_only=True)
    assert reply["result"]["decision"] != "intact"
    assert reply["result"]["reasons"]


# -- errors: each one answered, and the loop keeps serving ---------------------------------------


def error_of(reply: dict[str, Any]) -> tuple[int, str]:
    return reply["error"]["code"], reply["error"]["data"]["reason"]


def test_garbage_then_a_good_request(home: Path) -> None:
    bad, good = run(home, b"this is not json\n", rpc("health", request_id="h"))
    assert bad["id"] is None
    assert error_of(bad) == (RpcCode.PARSE_ERROR, "invalid-json")
    assert good["id"] == "h"
    assert good["result"]["ok"] is True


def test_a_10_mb_line_is_refused_and_serving_continues(home: Path) -> None:
    huge = b'{"jsonrpc":"2.0","id":1,"method":"health","params":{"x":"' + b"a" * (10 << 20)
    bad, good = run(home, huge + b'"}}\n', rpc("health", request_id=2))
    assert error_of(bad) == (RpcCode.INVALID_REQUEST, "line-too-long")
    assert bad["error"]["data"]["limitBytes"] == MAX_LINE_BYTES
    assert bad["id"] == 1  # recovered from the head of the line, so the caller is not left waiting
    assert good["id"] == 2


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":"req-9","method":"evaluate","params":{"x":"', "req-9"),
        (b'{"id":-4,"jsonrpc":"2.0","method":"evaluate","params":{"x":"', -4),
        (b'{"jsonrpc":"2.0","method":"evaluate","params":{"id":7,"x":"', None),
        (b'[{"jsonrpc":"2.0","id":3,"method":"evaluate","params":{"x":"', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"evaluate","params":{"x":"', None),
    ],
)
def test_an_oversize_request_keeps_its_id_only_when_it_opens_the_object(
    home: Path, head: bytes, expected: object
) -> None:
    (bad,) = run(home, head + b"y" * (MAX_LINE_BYTES + 10) + b'"}}\n')
    assert error_of(bad) == (RpcCode.INVALID_REQUEST, "line-too-long")
    assert bad["id"] == expected


def test_crlf_and_a_last_line_without_lf(home: Path) -> None:
    crlf = rpc("health", request_id=1)[:-1] + b"\r\n"
    first, second = run(home, crlf, rpc("health", None, 2)[:-1])
    assert first["id"] == 1
    assert second["id"] == 2


def test_unicode_separators_inside_params_are_data(home: Path, project: Path) -> None:
    params = call(project, "echo 'a\u2028b\u2029c'")
    line = (
        json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "evaluate", "params": params}, ensure_ascii=False
        ).encode()
        + b"\n"
    )
    (reply,) = run(home, line)
    assert reply["id"] == 3
    assert "result" in reply


@pytest.mark.parametrize(
    ("line", "code", "reason"),
    [
        (rpc("nope"), RpcCode.METHOD_NOT_FOUND, "unknown-method"),
        (rpc("evaluate", {"toolName": "bash"}), RpcCode.INVALID_PARAMS, "invalid-params"),
        (rpc("evaluate", ["bash"]), RpcCode.INVALID_PARAMS, "params-not-object"),
        (rpc("health", {"surprise": 1}), RpcCode.INVALID_PARAMS, "invalid-params"),
        (b'{"id":5,"method":"health"}\n', RpcCode.INVALID_REQUEST, "jsonrpc-version"),
        (b'{"jsonrpc":"2.0","id":5}\n', RpcCode.INVALID_REQUEST, "method-missing"),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"health","x":1}\n',
            RpcCode.INVALID_REQUEST,
            "unknown-member",
        ),
        (b'{"jsonrpc":"2.0","id":[1],"method":"health"}\n', RpcCode.INVALID_REQUEST, "invalid-id"),
        (b"[]\n", RpcCode.INVALID_REQUEST, "empty-batch"),
        (b"42\n", RpcCode.INVALID_REQUEST, "not-an-object"),
        (b"\xc3\x28\n", RpcCode.PARSE_ERROR, "not-utf8"),
    ],
)
def test_each_bad_request_gets_a_typed_error(
    home: Path, line: bytes, code: int, reason: str
) -> None:
    bad, good = run(home, line, rpc("health", request_id="after"))
    assert error_of(bad) == (code, reason)
    assert good["result"]["ok"] is True


def test_invalid_params_carry_the_validation_details(home: Path, project: Path) -> None:
    params = {**call(project), "input": "rm -rf build", "extra": True}
    (reply,) = run(home, rpc("evaluate", params))
    errors = reply["error"]["data"]["errors"]
    assert {e["loc"][0] for e in errors} == {"input", "extra"}
    assert all(e["msg"] and e["type"] for e in errors)


def test_guard_bad_input_becomes_a_bad_input_error(home: Path, project: Path) -> None:
    (reply,) = run(home, rpc("record", call(project, confirmed=True, ttlSeconds=601)))
    assert error_of(reply) == (RpcCode.BAD_INPUT, "bad-input")
    assert reply["error"]["data"]["what"] == "ttl"


def test_unknown_planner_becomes_a_plan_input_error(home: Path) -> None:
    (reply,) = run(home, rpc("plan", {"planner": "nope", "params": {}}))
    assert error_of(reply) == (RpcCode.BAD_INPUT, "plan-input-invalid")


def test_bad_planner_params_become_a_plan_input_error(home: Path) -> None:
    (reply,) = run(home, rpc("plan", {"params": {"guardCanOwnDialog": "yes"}}))
    assert error_of(reply) == (RpcCode.BAD_INPUT, "plan-input-invalid")


def test_notifications_get_no_reply_and_batches_get_a_list(home: Path) -> None:
    note = b'{"jsonrpc":"2.0","method":"health"}\n'
    batch = (
        b"["
        + rpc("health", None, 1)[:-1]
        + b","
        + note[:-1]
        + b","
        + rpc("nope", None, 2)[:-1]
        + b"]\n"
    )
    replies = run(home, note, batch)
    assert len(replies) == 1
    (batch_reply,) = replies
    assert [r["id"] for r in batch_reply] == [1, 2]
    assert "result" in batch_reply[0]
    assert batch_reply[1]["error"]["code"] == RpcCode.METHOD_NOT_FOUND


def test_a_home_that_cannot_be_opened_answers_every_call_with_an_error(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    health, evaluate = run(not_a_dir, rpc("health", None, 1), rpc("evaluate", call(tmp_path), 2))
    assert health["result"]["ok"] is False
    assert health["result"]["error"]
    assert error_of(evaluate) == (RpcCode.GUARD_UNAVAILABLE, "guard-open-failed")


# -- verify-only: the monitor consumer with only the public keyring ------------------------------


def test_verify_only_consumes_with_the_public_keyring(
    home: Path, project: Path, tmp_path: Path
) -> None:
    envelope = one(home, "record", call(project, confirmed=True))["envelope"]
    monitor = tmp_path / "monitor"
    monitor.mkdir(mode=0o700)
    (monitor / "keyring.json").write_bytes((home / "keyring.json").read_bytes())
    first, second, refused, described = run(
        monitor,
        rpc("consume", call(project, envelope=envelope), 1),
        rpc("consume", call(project, envelope=envelope), 2),
        rpc("record", call(project, confirmed=True), 3),
        rpc("describe", None, 4),
        verify_only=True,
    )
    assert first["result"]["decision"] == "consumed"
    assert second["result"]["match"]["decision"] == "consumed"
    assert error_of(refused) == (RpcCode.NOT_AVAILABLE, "verify-only")
    assert described["result"]["verifyOnly"] is True
    assert "record" not in described["result"]["methods"]
    assert not (monitor / "signing.key").exists()


def test_verify_only_without_a_keyring_keeps_serving_errors(tmp_path: Path, project: Path) -> None:
    health, consume = run(
        tmp_path / "empty",
        rpc("health", None, 1),
        rpc("consume", call(project, envelope={}), 2),
        verify_only=True,
    )
    assert health["result"]["ok"] is False
    assert error_of(consume) == (RpcCode.GUARD_UNAVAILABLE, "keyring-open-failed")


# -- a real process on real pipes -----------------------------------------------------------------


SERVE = """
import pathlib, sys
from guard._sidecar.handlers.methods import serve
sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, home=pathlib.Path(sys.argv[1])))
"""


def test_real_process_answers_line_by_line_and_stops_on_sigterm(home: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        for n in range(3):
            proc.stdin.write(rpc("health", None, n))
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            assert reply["id"] == n
            assert reply["result"]["pid"] == proc.pid
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 10
        assert proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- the monitor consumer's path: the envelope comes from pi's session file ---------------------


def write_session(path: Path, envelopes: list[dict[str, Any]]) -> Path:
    lines = [
        {"type": "session", "version": 3, "id": "s1", "cwd": "/x"},
        {"type": "message", "id": "m1", "message": {"role": "user", "content": "hi\u2028there"}},
        {"type": "custom", "customType": "something-else", "data": {"details": {}}},
        *(
            {"type": "custom", "customType": "operator-confirmation-evidence", "data": e}
            for e in envelopes
        ),
    ]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    path.write_text(text + '{"type":"custom","customType":"operator-conf')  # torn last line
    return path


def test_consume_takes_the_envelope_from_a_pi_session_file(
    home: Path, project: Path, tmp_path: Path
) -> None:
    build = one(home, "record", call(project, confirmed=True, toolCallId="call-1"))["envelope"]
    dist = one(home, "record", call(project, "rm -rf dist", confirmed=True, toolCallId="call-2"))
    session = write_session(tmp_path / "session.jsonl", [build, dist["envelope"]])
    source = {"sessionFile": str(session)}
    first, replay, missing = run(
        home,
        rpc("consume", call(project, toolCallId="call-1", **source), 1),
        rpc("consume", call(project, toolCallId="call-1", **source), 2),
        rpc("consume", call(project, toolCallId="call-404", **source), 3),
    )
    assert first["result"]["decision"] == "consumed"
    assert first["result"]["evidenceId"] == build["details"]["evidenceId"]
    assert replay["result"]["match"]["decision"] == "consumed"
    assert missing["result"]["match"]["decision"] == "missing"
    events = [e["event"] for e in audit_events(home)]
    assert events[-3:] == ["evidence.consumed", "evidence.rejected", "evidence.rejected"]


def test_session_envelopes_filters_by_tool_call_id(tmp_path: Path) -> None:
    a = {"details": {"toolCallId": "a"}}
    b = {"details": {"toolCallId": "b"}}
    session = write_session(tmp_path / "s.jsonl", [a, b, {"details": "odd"}])
    assert session_envelopes(session, tool_call_id="b") == [b]
    assert session_envelopes(session) == [a, b, {"details": "odd"}]


@pytest.mark.parametrize("sources", [{}, {"envelope": {}, "sessionFile": "x.jsonl"}])
def test_consume_needs_exactly_one_source(home: Path, project: Path, sources: dict) -> None:
    (reply,) = run(home, rpc("consume", call(project, **sources)))
    assert error_of(reply) == (RpcCode.INVALID_PARAMS, "invalid-params")


def test_an_unreadable_session_file_is_bad_input(home: Path, project: Path, tmp_path: Path) -> None:
    params = call(project, sessionFile=str(tmp_path / "missing.jsonl"))
    (reply,) = run(home, rpc("consume", params))
    assert error_of(reply) == (RpcCode.BAD_INPUT, "session-file-unreadable")


def test_ping_is_a_bare_round_trip(home: Path) -> None:
    assert one(home, "ping") == {"pong": True}
