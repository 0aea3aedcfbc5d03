"""``sandbox.plan``: the session's sandbox for the shim's bash spawn hook, and where it shows
(``session.started`` in the audit log, the footer, ``/guard``)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.framing import RpcCode
from tests.guard.sidecar.test_sidecar import audit_events, rpc, run

pytestmark = pytest.mark.integration

# Fails (never skips) where bubblewrap cannot start: it is a requirement.
needs_bwrap = pytest.mark.usefixtures("bwrap_required")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "guard-home"
    home.mkdir(mode=0o700)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def plan_then(home: Path, params: dict[str, Any], *after: str) -> list[Any]:
    lines = [rpc("sandbox.plan", params, 1)]
    lines += [rpc(method, None, n) for n, method in enumerate(after, start=2)]
    replies = run(home, *lines)
    for reply in replies:
        assert "error" not in reply, reply
    return [reply["result"] for reply in replies]


def started(home: Path) -> list[dict[str, Any]]:
    return [r["data"] for r in audit_events(home) if r["event"] == "session.started"]


@needs_bwrap
def test_a_sandboxed_session_gets_the_prefix_and_shows_it(home: Path, project: Path) -> None:
    plan, health, status = plan_then(
        home,
        {
            "cwd": str(project),
            "extraReadOnly": ["/usr/bin"],
            "piVersion": "0.87.1",
            "sessionId": "0193-session",
            "sessionFile": "/s/0193.jsonl",
            "mode": "rpc",
        },
        "health",
        "status",
    )
    assert plan["state"] == "sandboxed"
    assert plan["prefix"].startswith("exec ")
    assert plan["notice"] is None
    assert plan["blockReason"] is None
    assert plan["audited"] is True
    assert health["statusText"] == f"operator-guard on (sidecar pid {health['pid']}, sandboxed)"
    assert "  sandbox:      sandboxed: agent commands run in bubblewrap" in status["text"]
    (record,) = started(home)
    digest = record.pop("policyDigest")
    assert digest.startswith("sha256:") and len(digest) == 71
    assert record == {
        "sandbox": "sandboxed",
        "scope": str(project.resolve()),
        "piVersion": "0.87.1",
        "sidecarRestarted": False,
        "mode": "rpc",
        "network": "open",
        "session": {
            "id": "0193-session",
            "file": "/s/0193.jsonl",
            "guardPid": record["session"]["guardPid"],
        },
    }
    assert plan["effects"] == "review"
    assert shlex.split(plan["prefix"])[1:] == plan["argv"]
    # The session's directory (layers, /tmp) goes with its sidecar.
    assert not Path(plan["layers"]).exists()


@needs_bwrap
def test_the_prefix_runs_the_command_byte_for_byte_on_its_own_layer(
    home: Path, project: Path
) -> None:
    from guard._sidecar.handlers.methods import Sidecar

    sidecar = Sidecar(home)
    try:
        reply = sidecar.handle_message(
            {"jsonrpc": "2.0", "id": 1, "method": "sandbox.plan", "params": {"cwd": str(project)}}
        )
        assert reply is not None
        plan = reply["result"]
        quoted = "'" + 'echo "it\'s" $((1+1))'.replace("'", "'\"'\"'") + "'"

        def run_it(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["/bin/bash", "-c", f"{plan['prefix']} {quoted}"],
                                  capture_output=True, text=True, timeout=60, check=False,
                                  env=env)  # fmt: skip

        done = run_it({**os.environ, "PI_OPERATOR_GUARD_LAYER": "layer-of-this-test"})
        assert done.stdout == "it's 2\n", done.stderr
        assert (Path(plan["layers"]) / "layer-of-this-test" / "upper").is_dir()
        without = run_it(dict(os.environ))
        assert (without.returncode, without.stdout) == (125, "")  # no layer: nothing runs
        assert "has no layer" in without.stderr
    finally:
        sidecar.close()


def test_an_unavailable_sandbox_blocks_bash_with_a_reason(home: Path, project: Path) -> None:
    (home / "operator-guard.toml").write_text('[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    plan, health, status = plan_then(
        home, {"cwd": str(project), "sidecarRestarted": True}, "health", "status"
    )
    assert plan["state"] == "unavailable"
    assert plan["reason"] == "missing-binary"
    assert plan["prefix"] is None
    assert plan["noticeLevel"] == "error"
    assert "the agent's bash is blocked" in plan["notice"]
    assert plan["blockReason"].startswith("operator-guard blocked this bash call: ")
    assert plan["blockReason"].endswith("[reason: sandbox-unavailable]")
    assert "/nonexistent/bwrap" in plan["blockReason"]
    assert health["statusText"].endswith(", sandbox unavailable)")
    assert "  sandbox:      unavailable [missing-binary]: " in status["text"]
    (event,) = started(home)
    assert event["sandbox"] == "unavailable"
    assert event["reason"] == "missing-binary"
    assert event["sidecarRestarted"] is True
    assert "/nonexistent/bwrap" in event["message"]


def test_an_opted_out_session_is_marked_unsandboxed(home: Path, project: Path) -> None:
    (home / "operator-guard.toml").write_text('[sandbox]\nmode = "off"\n')
    plan, health = plan_then(home, {"cwd": str(project)}, "health")
    assert plan["state"] == "unsandboxed"
    assert plan["reason"] == "opted-out"
    assert plan["prefix"] is None
    assert plan["noticeLevel"] == "warning"
    assert "UNSANDBOXED" in plan["notice"]
    assert plan["blockReason"] is None
    assert health["statusText"].endswith(", unsandboxed)")
    assert started(home)[0]["sandbox"] == "unsandboxed"


def test_before_a_plan_the_footer_names_no_sandbox_state(home: Path) -> None:
    (health,) = (r["result"] for r in run(home, rpc("health")))
    assert health["statusText"] == f"operator-guard on (sidecar pid {health['pid']})"


def test_a_project_file_cannot_opt_out(home: Path, project: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "operator-guard.toml").write_text('[sandbox]\nmode = "off"\n')
    (plan,) = plan_then(home, {"cwd": str(project)})
    assert plan["state"] != "unsandboxed"


def test_bad_params_are_refused(home: Path, project: Path) -> None:
    bad = [
        {"cwd": str(project), "extraReadOnly": ["relative/path"]},
        {"cwd": str(project), "shell": "bash"},
        {"cwd": str(project), "unknown": 1},
        {"cwd": str(project), "extraReadOnly": ["/x"] * 17},
    ]
    replies = run(home, *(rpc("sandbox.plan", p, n) for n, p in enumerate(bad)))
    assert [r["error"]["code"] for r in replies] == [RpcCode.INVALID_PARAMS] * len(bad)
    (missing,) = run(home, rpc("sandbox.plan", {"cwd": str(project / "nope")}))
    assert missing["error"]["data"]["reason"] == "bad-input"
    assert not (home / "audit.jsonl").exists() or started(home) == []


def test_verify_only_does_not_offer_it(tmp_path: Path, home: Path, project: Path) -> None:
    run(home, rpc("health"))  # creates the home and its keyring
    described, refused = run(
        home,
        rpc("describe", None, 1),
        rpc("sandbox.plan", {"cwd": str(project)}, 2),
        verify_only=True,
    )
    assert "sandbox.plan" not in described["result"]["methods"]
    assert refused["error"]["data"]["reason"] == "verify-only"


def test_describe_lists_it_with_its_params(home: Path) -> None:
    (described,) = run(home, rpc("describe"))
    assert "sandbox.plan" in described["result"]["methods"]
    schema = described["result"]["params"]["sandbox.plan"]
    assert set(schema["properties"]) == {
        "cwd",
        "shell",
        "extraReadOnly",
        "piVersion",
        "sidecarRestarted",
        "envNames",
        "piDir",
        "nodePath",
        "sessionId",
        "sessionFile",
        "mode",
        "tools",
    }


def write_call(project: Path, path: Path) -> dict[str, Any]:
    return {
        "toolName": "write",
        "input": {"path": str(path), "content": "planted"},
        "cwd": str(project),
        "toolCallId": "w1",
        "hasUi": True,
    }


@needs_bwrap
def test_pis_installation_as_the_extension_reports_it_is_never_written(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """pi renames its process, so the sidecar learns where pi runs from the extension; a
    policy loaded before that (an earlier evaluate) is loaded again."""
    pi_dir = tmp_path / "lib" / "node_modules" / "@earendil-works" / "pi-coding-agent"
    (pi_dir / "dist").mkdir(parents=True)
    sibling_dependency = tmp_path / "lib" / "node_modules" / "chalk" / "index.js"
    node = tmp_path / "node-prefix" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("")
    targets = [pi_dir / "dist" / "cli.js", sibling_dependency, node]
    before, plan, *after = run(
        home,
        rpc("evaluate", write_call(project, targets[0]), 1),
        rpc("sandbox.plan", {"cwd": str(project), "piDir": str(pi_dir), "nodePath": str(node)}, 2),
        *(rpc("evaluate", write_call(project, t), n) for n, t in enumerate(targets, start=3)),
    )
    assert before["result"]["action"] == "confirm"  # outside the workspace: asked
    assert plan["result"]["state"] == "sandboxed"
    for reply, target in zip(after, targets, strict=True):
        assert reply["result"]["action"] == "block", target
        assert "builtin.runs-outside-sandbox" in reply["result"]["evaluation"]["ruleIds"]


@needs_bwrap
def test_a_repository_made_after_the_plan_gets_a_new_plan_with_the_next_bash_call(
    home: Path, project: Path
) -> None:
    from guard._hermetic import git_env, system_program
    from guard._sidecar.handlers.methods import Sidecar

    sidecar = Sidecar(home)

    def call(method: str, params: dict[str, Any]) -> Any:
        reply = sidecar.handle_message(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        )
        assert reply is not None and "error" not in reply, reply
        return reply["result"]

    bash = {"toolName": "bash", "input": {"command": "ls"}, "cwd": str(project), "hasUi": True}
    try:
        plan = call("sandbox.plan", {"cwd": str(project)})
        assert ".git/hooks" not in plan["prefix"]
        assert call("evaluate", bash)["sandbox"] is None  # nothing changed: no new plan
        subprocess.run(
            [system_program("git"), "init", "-q", str(project)], env=git_env(), check=True
        )
        fresh = call("evaluate", bash)["sandbox"]
        assert fresh is not None and fresh["state"] == "sandboxed"
        assert f"--ro-bind {project}/.git/hooks" in fresh["prefix"]
        assert call("evaluate", bash)["sandbox"] is None  # current again
        (project / "sub").mkdir()
        subprocess.run(
            [system_program("git"), "init", "-q", str(project / "sub")], env=git_env(), check=True
        )
        nested = call("evaluate", bash)["sandbox"]
        assert nested is not None and f"{project}/sub/.git/hooks" in nested["prefix"]
    finally:
        sidecar.close()
