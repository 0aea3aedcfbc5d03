"""The warm start inside the real pi (both pinned pis): the first session starts its sidecar
cold and leaves a fork server in the home; the next session's sidecar is forked from it,
judges its calls as ever (an asked call is asked, a safe one runs) and the log verifies; an
agent command reaching for the fork server's socket finds nothing."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from guard._pi import warm_server

from .pi_world import World, confirms, result_text, sidecar_pids, tool_ends

pytestmark = pytest.mark.e2e


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def wait_for_server(home: Path, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = warm_server(home)
        if found.pid is not None and found.listening:
            return found.pid
        time.sleep(0.1)
    raise AssertionError("no fork server in the home after the first session")


@pytest.fixture
def warm_world(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """A world with the warm start on (the suite runs with it off), whose fork server stays
    up between the test's sessions however slowly pi starts under load; stopped at the end."""
    monkeypatch.setenv("PI_OPERATOR_GUARD_WARM_IDLE", "120")
    yield world
    pid = warm_server(world.home).pid
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def assert_log_verifies(world: World) -> None:
    verify = world.cli("audit", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.every_pi
def test_the_next_session_s_sidecar_is_forked_warm_and_judges_as_ever(warm_world: World) -> None:
    world = warm_world
    first = world.print_mode("scenario:sandbox-workspace-write")
    assert first.returncode == 0, first.stderr
    server = wait_for_server(world.home)
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-a", lambda _request: True)
        (launcher,) = sidecar_pids(pi.proc.pid)
        started = world.audit("session.started")
        sidecar = started[-1]["data"]["session"]["guardPid"]
        assert sidecar != launcher  # not the launcher exec'd into a cold sidecar
        assert parent_of(sidecar) == server  # forked by the home's fork server
        assert len(confirms(events)) == 1  # the destructive call is asked, as ever
        (end,) = tool_ends(events)
        assert end["isError"] is False, result_text(end)
        assert not (world.project / "a").exists()
        events = pi.prompt("scenario:sandbox-workspace-write")
        assert confirms(events) == []  # the safe one runs unasked, in the sandbox
        (end,) = tool_ends(events)
        assert "hi" in result_text(end)
    sessions = [r["data"]["session"]["guardPid"] for r in world.audit("session.ended")]
    assert sessions[-1] == sidecar and len(set(sessions)) == 2
    assert len(world.envelopes()) == 1
    assert_log_verifies(world)


def test_an_agent_command_finds_no_fork_server(warm_world: World) -> None:
    world = warm_world
    assert world.print_mode("scenario:sandbox-workspace-write").returncode == 0
    server = wait_for_server(world.home)
    with world.rpc() as pi:
        events = pi.prompt("scenario:sandbox-warm-socket", lambda _request: True)
        outputs = [result_text(end) for end in tool_ends(events)]
        assert len(outputs) == 2
        assert "CONNECTED" not in outputs[0]
        assert "warm.sock" not in outputs[1] and "signing.key" not in outputs[1]
        assert str(server) not in outputs[1].split()  # no process outside the sandbox shows
    assert len(world.audit("session.started")) == 2  # the two sessions' own, nobody else's
    assert_log_verifies(world)
