"""Notices that are true: the tamper notice says what the guard does (every tool call is
blocked, the harmless ones too), and the Details screen, whose one choice is Back, does not
tell the operator that Enter declines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.sidecar.test_sidecar import call, rpc, run

pytestmark = pytest.mark.integration


def test_the_tamper_notice_says_every_tool_call_is_blocked_and_it_is(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True)
    for n in range(4):
        run(home, rpc("record", {**call(project), "confirmed": True, "toolCallId": f"c{n}"}))
    log = home / "audit.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b"rm -rf build", b"rm -rf BUILD")
    log.write_bytes(b"".join(lines))

    harmless = [
        call(project, "ls", hasUi=True, toolCallId="h1"),
        {"toolName": "read", "input": {"path": "README"}, "cwd": str(project), "hasUi": True,
         "toolCallId": "h2"},
    ]  # fmt: skip
    health, *answers = run(
        home, rpc("health", None, 1), *(rpc("evaluate", p, i + 2) for i, p in enumerate(harmless))
    )
    text = health["result"]["statusText"]
    assert text.startswith("operator-guard blocks every tool call: the audit log does not verify")
    assert "off" not in text.split(":")[0]  # it said "operator-guard off", read as unguarded
    for answer in answers:  # and so it does: harmless calls are refused too
        assert answer["error"]["data"]["reason"] == "audit-integrity", answer


def test_the_details_screen_does_not_say_enter_declines(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (answer,) = run(home, rpc("evaluate", {**call(project), "hasUi": True, "toolCallId": "c1"}))
    dialog = answer["result"]["dialog"]
    # pi shows the details with one choice, Back (index.ts: ask(dialog.details, ["Back"])):
    # Enter there goes back to the question, it declines nothing.
    assert "Enter" not in dialog["details"]
    assert "No is preselected" in dialog["details"]
    assert dialog["choices"]["no"] == "No"  # the question's first choice: Enter declines there


def test_a_headless_wait_names_the_page_another_session_runs(tmp_path: Path) -> None:
    """Two sessions, one port: the second has no page of its own, and its waiting call's
    stderr line names the first one's page rather than 'the page of approvals serve'."""
    import socket

    from guard._sidecar.handlers.methods import Sidecar
    from tests.guard.sidecar.test_sidecar_methods import result

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True)
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text(
        f'[approvals]\nheadless = "wait"\npage = true\nport = {port}\n'
    )
    first, second = Sidecar(home), Sidecar(home)
    try:
        result(first, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "tui"})
        result(second, "sandbox.plan", {"cwd": str(project), "sessionId": "s2", "mode": "print"})
        waiting = result(second, "evaluate", {**call(project), "hasUi": False, "toolCallId": "w"})
        notice = waiting["waitNotice"]
        assert f"on the page at http://localhost:{port}/ (/guard in its session" in notice
        assert "token" not in notice
    finally:
        second.close()
        first.close()
