"""The sidecar exports every guarded call it judges when the user's policy says so, from the
one place its records are made durable; ``status`` (``/guard``) says where to and what was
dropped; off, the export is never started (and the SDK never imported: test_startup)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import Sidecar
from guard._telemetry.export import STATUS_FILE
from tests.otlp_receiver import otlp_receiver

pytestmark = pytest.mark.integration


def result(server: Sidecar, method: str, params: Any) -> Any:
    reply = server.handle_message({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert reply is not None and "error" not in reply, reply
    return reply["result"]


def test_each_judged_call_is_one_span_and_status_counts_them(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True)
    home.mkdir()
    with otlp_receiver() as receiver:
        (home / "operator-guard.toml").write_text(
            f'[telemetry]\nenabled = true\nendpoint = "{receiver.endpoint}"\n'
        )
        sidecar = Sidecar(home)
        try:
            rm = {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(project)}
            asked = result(sidecar, "evaluate", {**rm, "toolCallId": "a", "hasUi": True})
            said = {**rm, "toolCallId": "a", "approvalId": asked["approval"]["id"]}
            result(sidecar, "audit.declined", {**said, "reason": "timeout"})
            result(sidecar, "evaluate", {**rm, "toolCallId": "b", "hasUi": False})
            read = {"toolName": "read", "input": {"path": "x"}, "cwd": str(project)}
            result(sidecar, "evaluate", {**read, "toolCallId": "c", "hasUi": True})
            result(sidecar, "audit.toolExecuted", {**read, "toolCallId": "c", "isError": False})
            spans = receiver.wait_for(3)
            # The receiver has them before the export process hears its post's answer and
            # says so to the sidecar: the count follows a moment later.
            deadline = time.monotonic() + 30
            while True:
                status = result(sidecar, "status", {"tools": []})
                file = sidecar.session.session_dir / STATUS_FILE
                written = json.loads(file.read_text()) if file.exists() else {}
                counted = (status["telemetry"]["exported"], written.get("exported"))
                if counted == (3, 3) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        finally:
            sidecar.close()
    by_call = {s.attributes["gen_ai.tool.call.id"]: s.attributes for s in spans}
    assert len(spans) == 3
    assert (by_call["a"]["pi_guard.decision"], by_call["a"]["pi_guard.answer"]) == (
        "ask",
        "timeout",
    )
    assert by_call["b"]["pi_guard.reason"] == "no-ui"
    assert by_call["c"]["pi_guard.decision"] == "allow"
    assert status["telemetry"]["state"] == "on"
    assert status["telemetry"]["exported"] == 3
    assert "telemetry:    on: " + receiver.endpoint in status["text"]
    assert written["exported"] == 3
    assert not sidecar.session.session_dir.exists()  # the status went with the session


def test_off_by_default_the_status_says_so_and_nothing_is_observed(tmp_path: Path) -> None:
    sidecar = Sidecar(tmp_path / "home")
    try:
        assert (
            sidecar.session.home.guard is not None and sidecar.session.home.guard.observer is None
        )
        status = result(sidecar, "status", {"tools": []})
    finally:
        sidecar.close()
    assert status["telemetry"]["state"] == "off"
    assert "telemetry:    off (not-enabled" in status["text"]
