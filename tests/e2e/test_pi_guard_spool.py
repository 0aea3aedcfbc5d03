"""Nothing is lost: what the shim could not deliver reaches the audit log after a pi restart.

The sidecar dies while the operator's dialog is open and the guard home is unusable while pi
runs on, so the operator's Yes (which never became evidence) and the tool call blocked for it
wait in the shim's spool; the next pi's sidecar logs them, marked ``deliveredLate``.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from typing import Any

import pytest

from .pi_world import World, result_text, sidecar_pids, tool_ends, wait_gone

pytestmark = pytest.mark.e2e


@pytest.mark.every_pi
def test_a_yes_given_as_the_sidecar_dies_reaches_the_log_after_a_pi_restart(world: World) -> None:
    extension = world.extensions_dir() / "operator-guard"
    away = world.home.with_name(f"{world.home.name}.away")

    with world.rpc() as pi:

        def answer(_request: Mapping[str, Any]) -> bool:
            # The dialog is open: the sidecar dies, and no new one can use the home.
            (pid,) = sidecar_pids(pi.proc.pid)
            os.kill(pid, signal.SIGKILL)
            wait_gone(pid)
            world.home.rename(away)
            world.home.write_text("not a directory\n")
            return True

        events = pi.prompt("scenario:rm-build", answer)
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert "[reason: sidecar-unavailable]" in result_text(end)
    assert list(extension.glob("spool*"))  # kept: no sidecar could take it
    world.home.unlink()
    away.rename(world.home)
    assert not [r for r in world.audit() if r["data"].get("deliveredLate")]

    with world.rpc() as pi:  # a new pi: its sidecar takes the spool at session start
        pi.prompt("scenario:rm-b", lambda _request: False)
    (late,) = [r for r in world.audit("confirmation.declined") if r["data"].get("deliveredLate")]
    assert late["data"]["reason"] == "confirmed-unrecorded"
    assert late["data"]["toolCallId"] == end["toolCallId"]
    assert late["data"]["occurredAtIso"] < late["ts"]
    assert world.audit("confirmation.recorded") == []  # a Yes without evidence
    assert not list(extension.glob("spool*"))  # delivered: the spool is gone

    # The auditor sees it: one blocked call (delivered late), one declined, nothing ran.
    report = world.cli("audit", "report", "--json")
    summary = json.loads(report.stdout)["summary"]
    assert summary["blocked"] == 1
    assert summary["blockedByReason"] == {"confirmed-unrecorded": 1}
    assert summary["declined"] == 1
    assert summary["deliveredLate"] == 1
    assert summary["executions"] == 0
    assert world.cli("audit", "verify").returncode == 0


def test_a_call_blocked_while_the_sidecar_is_down_reaches_the_log_after_a_pi_restart(
    world: World,
) -> None:
    extension = world.extensions_dir() / "operator-guard"
    config = extension / "guard.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "requestTimeoutMs": 3000}))
    away = world.home.with_name(f"{world.home.name}.away")
    with world.rpc() as pi:
        pi.prompt("scenario:rm-a", lambda _request: False)
        # Down for good: the sidecar hangs (a crash would be replaced at once), so the shim
        # kills it at the timeout, and no new one can use the home.
        (pid,) = sidecar_pids(pi.proc.pid)
        os.kill(pid, signal.SIGSTOP)
        world.home.rename(away)
        world.home.write_text("not a directory\n")
        events = pi.prompt("scenario:rm-b", lambda _request: True)
        wait_gone(pid)
    (end,) = tool_ends(events)
    assert "[reason: sidecar-unavailable]" in result_text(end)
    world.home.unlink()
    away.rename(world.home)

    with world.rpc() as pi:
        pi.prompt("scenario:rm-c", lambda _request: False)
    late = [r for r in world.audit("confirmation.declined") if r["data"].get("deliveredLate")]
    assert [(r["data"]["reason"], r["data"]["toolCallId"]) for r in late] == [
        ("sidecar-unavailable", end["toolCallId"])
    ]
    # It names the session it happened in (the first pi), not the one that delivered it.
    started = [r["data"]["session"]["id"] for r in world.audit("session.started")]
    first, second = started[0], started[-1]
    assert first != second and late[0]["data"]["session"]["id"] == first
    assert not list(extension.glob("spool*"))
