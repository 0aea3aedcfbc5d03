"""The sidecar with tools beyond pi's own: the facts the shim sends, the dialog that names
where a tool comes from and the script that made a nested call, evidence a monitor
consumes with ``--tool mcp__s__t``, no grant for such calls, and what ``session.started``
and ``/guard`` say of the session's tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import Sidecar
from tests.cli_runner import invoke
from tests.guard.sidecar.test_sidecar_methods import error, monitor_home, records, result

pytestmark = pytest.mark.integration

DELETE = {
    "name": "mcp__files__delete_file",
    "source": "builtin",
    "origin": "builtin:mcp",
    "namespace": {"name": "mcp__files", "aliases": ["files"]},
    "annotations": {"destructiveHint": True},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sidecar]:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    served = Sidecar(tmp_path / "home")
    assert served.session.home.guard is not None
    yield served
    served.close()


def mcp_call(project: Path, **extra: Any) -> dict[str, Any]:
    return {
        "toolName": "mcp__files__delete_file",
        "input": {"path": "notes.txt"},
        "cwd": str(project),
        "toolCallId": "call_1",
        **extra,
    }


def test_a_destructive_mcp_call_asks_naming_its_server(sidecar: Sidecar, project: Path) -> None:
    reply = result(sidecar, "evaluate", mcp_call(project, tool=DELETE))
    assert reply["action"] == "confirm"
    dialog = reply["dialog"]
    assert "mcp__files__delete_file" in dialog["title"]
    assert "MCP server 'files'" in dialog["message"]
    assert "destructive=True" in dialog["message"]
    assert '"path":"notes.txt"' in dialog["details"]  # its arguments, redacted like a preview
    assert dialog["choices"]["grants"] == []  # no grant ever covers an MCP call (yet)


def test_facts_of_another_tool_are_refused(sidecar: Sidecar, project: Path) -> None:
    other = {**DELETE, "name": "mcp__files__read_file"}
    err = error(sidecar, "evaluate", mcp_call(project, tool=other))
    assert "another tool" in json.dumps(err)


def test_a_nested_call_names_the_script_and_its_line(sidecar: Sidecar, project: Path) -> None:
    code = "const a = 1;\nawait tools.mcp__files__delete_file({ path: 'notes.txt' });\nreturn a;"
    parent = {"toolCallId": "call_9", "toolName": "codemode", "input": {"code": code}}
    reply = result(
        sidecar, "evaluate", mcp_call(project, tool=DELETE, parent=parent, toolCallId="call_9/1")
    )
    message = reply["dialog"]["message"]
    assert message.startswith("From:     a codemode call (call_9):")
    assert "tools.mcp__files__delete_file({ path: 'notes.txt' })" in message
    assert "const a = 1" not in message


def test_an_approved_mcp_call_is_evidence_a_monitor_consumes_once(
    sidecar: Sidecar, project: Path, tmp_path: Path
) -> None:
    result(sidecar, "evaluate", mcp_call(project, tool=DELETE))
    recorded = result(sidecar, "record", mcp_call(project, confirmed=True))
    assert recorded["decision"] == "recorded"
    details = recorded["envelope"]["details"]
    assert (details["toolName"], details["actionKind"]) == ("mcp__files__delete_file", "protected")
    assert details["toolCallId"] == "call_1"
    envelope = tmp_path / "envelope.json"
    envelope.write_text(json.dumps(recorded["envelope"]))
    monitor = monitor_home(tmp_path, sidecar.home)
    args = ["consume", "--envelope", str(envelope), "--tool", "mcp__files__delete_file"]
    args += ["--input", json.dumps({"path": "notes.txt"}), "--cwd", str(project)]
    args += ["--tool-call-id", "call_1"]
    first = invoke(*args, home=monitor)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["decision"] == "consumed"
    again = invoke(*args, home=monitor)
    assert json.loads(again.stdout)["match"]["decision"] == "consumed"  # replay refused
    # bound to the tool with its server: the same input for another server's tool is refused
    other = invoke(*[a if a != "mcp__files__delete_file" else "mcp__filez__delete_file" for a in args], home=monitor_home(tmp_path, sidecar.home, "m2"))  # fmt: skip
    assert json.loads(other.stdout)["match"]["decision"] in {"mismatch", "untrusted"}


def test_a_declined_mcp_call_is_audited(sidecar: Sidecar, project: Path) -> None:
    result(sidecar, "evaluate", mcp_call(project, tool=DELETE))
    result(sidecar, "audit.declined", mcp_call(project, reason="declined"))
    (declined,) = records(sidecar.home, "confirmation.declined")
    assert declined["toolName"] == "mcp__files__delete_file"
    assert declined["actionKind"] == "protected"
    assert declined["preview"] == '{"path":"notes.txt"}'


def test_session_started_and_status_list_the_tools(sidecar: Sidecar, project: Path) -> None:
    reach = {"name": "codemode", "source": "builtin", "origin": "builtin:codemode"}
    tools = [DELETE, {**reach, "reachesTools": True}, {"name": "bash", "source": "guard"}]
    result(sidecar, "sandbox.plan", {"cwd": str(project), "piVersion": "1.6.0", "tools": tools})
    (started,) = records(sidecar.home, "session.started")
    assert started["piVersion"] == "1.6.0"
    assert {"name": "mcp__files__delete_file", "source": "builtin", "server": "files"} in started[
        "tools"
    ]
    extension = {"name": "danger_tool", "source": "extension", "origin": "/x/index.ts"}
    text = result(sidecar, "status", {"tools": [*tools, extension]})["text"]
    assert "3 reachable" not in text and "4 reachable" in text
    assert "mcp__files__delete_file [MCP server 'files']: asks by default" in text
    assert "codemode [pi built-in (builtin:codemode)]: reaches other tools" in text
    assert "danger_tool [the extension /x/index.ts]: asks by default" in text
    # what status learned judges the next call: the extension's tool asks
    ask = result(sidecar, "evaluate", {"toolName": "danger_tool", "input": {}, "cwd": str(project)})
    assert ask["action"] == "confirm"
