"""The guard inside the real pi is never silently absent, never approves on a stray Enter, and
is one guard per session: stderr without a UI, the footer, the default No, a decline with a
reason, a double install, and the planner tool's runtime facts.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from typing import Any

import pytest

from .pi_world import (
    World,
    confirms,
    notices,
    result_text,
    serving_sidecars,
    sidecar_pids,
    statuses,
    tool_ends,
    wait_gone,
)

pytestmark = [pytest.mark.every_pi, pytest.mark.e2e]


def guard_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("operator-guard")]


def test_print_mode_says_each_block_on_stderr(world: World) -> None:
    done = world.print_mode("scenario:rm-build")
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in guard_lines(done.stderr) if "blocked" in line]
    assert line.startswith("operator-guard blocked bash: ")
    assert "no UI" in line
    assert str(world.project / "build") in line or "rm -rf build" in line
    assert line.endswith("[reason: no-ui]")
    assert (world.project / "build" / "keep.txt").exists()


def test_an_unusable_home_is_said_at_start_in_the_footer_and_in_every_block(world: World) -> None:
    (world.tmp / "not-a-dir").write_text("x")
    home = world.tmp / "not-a-dir" / "home"
    world.install(home=home)  # the same install, pointed at a home that cannot exist

    done = world.print_mode("scenario:rm-build")
    lines = guard_lines(done.stderr)
    assert len(lines) == 2, done.stderr
    start, block = lines
    assert f"home unusable ({home}: " in start
    assert "Not a directory" in start
    assert block.startswith("operator-guard blocked bash: ")
    assert f"home unusable ({home}: " in block
    assert block.endswith("[reason: guard-open-failed]")
    assert (world.project / "build" / "keep.txt").exists()

    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", lambda _request: True)
    assert confirms(events) == []
    (end,) = tool_ends(events)
    assert "Not a directory" in result_text(end)
    assert str(home) in result_text(end)
    (footer,) = statuses(events)
    assert footer is not None
    assert footer.startswith(f"operator-guard home unusable ({home}: ")
    assert any("home unusable" in n for n in notices(events))


def test_no_is_first_so_enter_declines_and_yes_must_be_chosen(world: World) -> None:
    picked: list[str] = []

    def enter(event: Mapping[str, Any]) -> None:
        # What a bare Enter does: take the highlighted, first option.
        if event.get("method") == "select" and confirms([event]):
            picked.append(event["options"][0])
            pi.send({"type": "extension_ui_response", "id": event["id"], "value": picked[-1]})

    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", lambda _request: None, on_event=enter)
    (dialog,) = confirms(events)
    assert dialog["options"][0] == "No"
    assert next(o for o in dialog["options"] if o.startswith("Yes")) == "Yes, this call once"
    assert dialog["options"][-1] == "Details…"  # Enter alone declines: said there
    assert picked == ["No"]
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert "[reason: declined]" in result_text(end)
    assert (world.project / "build" / "keep.txt").exists()
    (declined,) = world.audit("confirmation.declined")
    assert declined["data"]["reason"] == "declined"
    assert "operatorReason" not in declined["data"]


def test_a_decline_with_a_reason_reaches_the_model_and_the_audit(world: World) -> None:
    said = "use git clean -n first API_KEY=s3cr3t-value"
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", lambda _request: said)
    assert len(confirms(events)) == 1
    (asked,) = [
        e for e in events if e.get("type") == "extension_ui_request" and e["method"] == "input"
    ]
    assert "why not" in asked["title"]
    (end,) = tool_ends(events)
    text = result_text(end)
    assert end["isError"] is True
    assert "use git clean -n first" in text
    assert "s3cr3t" not in text
    assert "[reason: declined]" in text
    assert (world.project / "build" / "keep.txt").exists()
    (declined,) = world.audit("confirmation.declined")
    assert declined["data"]["operatorReason"] == "use git clean -n first API_KEY=[REDACTED]"
    verify = world.cli("audit", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_the_footer_follows_the_sidecar_through_a_kill_and_a_restart(world: World) -> None:
    with world.rpc() as pi:
        pi.prompt("scenario:rm-a", lambda _request: True)
        (old,) = serving_sidecars(pi.proc.pid)
        assert statuses(pi.events) == [f"operator-guard on (sidecar pid {old}, sandboxed)"]
        os.kill(old, signal.SIGKILL)
        wait_gone(old)
        pi.prompt("scenario:rm-b", lambda _request: True)
        pi.prompt("scenario:rm-c", lambda _request: True)
        (new,) = serving_sidecars(pi.proc.pid)
        # the footer follows the new sidecar's health probe, which may answer after the prompt
        pi.wait_for(lambda seen: len(statuses(seen)) >= 4)
    shown = statuses(pi.events)
    assert len(shown) == 4, shown
    on_old, down, restarting, on_new = shown
    assert on_old == f"operator-guard on (sidecar pid {old}, sandboxed)"
    assert down is not None
    assert down.startswith("operator-guard down (sidecar exited (SIGKILL)")
    assert restarting == "operator-guard restarting"
    assert on_new == f"operator-guard on (sidecar pid {new}, sandboxed)"
    assert new != old


def test_a_double_install_guards_once_and_says_so_once(world: World) -> None:
    world.install("project")  # the world already has the personal (global) install
    world.trust_project()  # pi >= 0.79 loads a project extension only in a trusted folder
    first = world.extensions_dir("project") / "operator-guard"
    second = world.extensions_dir("global") / "operator-guard"
    with world.rpc() as pi:
        events = pi.prompt("scenario:two-rms", lambda _request: True)
        assert len(sidecar_pids(pi.proc.pid)) == 1
        *_, status = pi.command("/guard")
    stderr = "".join(p.read_text() for p in world.tmp.glob("pi-stderr-*.log"))
    assert len(confirms(events)) == 2  # one dialog per call, two calls
    assert all(not e["isError"] for e in tool_ends(events))
    (notice,) = [n for n in notices(events) if "stands down" in n]
    assert str(first) in notice
    assert str(second) in notice
    assert stderr.count("stands down") == 1
    assert "operator-guard status" in status["message"]  # /guard is a command, not a prompt
    assert len(world.envelopes()) == 2
    assert len(world.audit("confirmation.recorded")) == 2
    assert world.audit("confirmation.declined") == []  # one guard: no second answer logged


@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("scenario", ["plan-empty", "plan-guard-owned"])
def test_the_planner_tool_knows_the_guard_owns_the_dialog(world: World, scenario: str) -> None:
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", lambda _request: True)
    assert confirms(events) == []
    (end,) = tool_ends(events)
    plan = json.loads(result_text(end))
    assert plan["channel"] == "guard-owned-report-only"
    assert plan["dispatchAllowed"] is False
    assert plan["authorization"] == "none"
    assert plan["runtime"]["facts"] == {"hasUi": True, "appendEntry": True}
    assert plan["runtime"]["filled"] == {"guardCanOwnDialog": True}
    assert "owns the confirmation dialog" in plan["runtime"]["note"]
    assert "destructive-dialog=no" not in plan["summary"]
