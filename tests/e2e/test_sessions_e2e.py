"""Three pi sessions at once on one guard home, in the real pi (both pinned versions): every
record names the session that made it, and the report attributes each call to it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import MODEL_ID, PROVIDER, World, bash, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

COMMANDS = {"one": "echo session-one", "two": "echo session-two", "three": "rm -rf a"}


@pytest.mark.every_pi
def test_three_concurrent_sessions_are_each_attributed(
    world: World, model_server: ScriptedModelServer
) -> None:
    for name, command in COMMANDS.items():
        model_server.add_scenario(f"attr-{name}", turns(bash(command)))
    runs = [
        subprocess.Popen(
            world.pi.command(
                "-p",
                "--provider",
                PROVIDER,
                "--model",
                MODEL_ID,
                "--no-session",
                f"scenario:attr-{name}",
            ),
            cwd=world.project,
            env=world.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in COMMANDS
    ]
    for run in runs:
        _, err = run.communicate(timeout=180)
        assert run.returncode == 0, err[-2000:]

    records = world.audit()
    attributed = [r for r in records if not r["event"].startswith(("log.", "key."))]
    assert attributed and all("session" in r["data"] for r in attributed), attributed
    by_session: dict[str, set[str]] = {}
    for record in attributed:
        preview = record["data"].get("preview")
        if record["event"] in ("tool.executed", "confirmation.declined") and preview:
            by_session.setdefault(record["data"]["session"]["id"], set()).add(preview)
    # Three sessions, each with exactly the one call its pi made.
    assert sorted(by_session.values(), key=sorted) == sorted(
        ({c} for c in COMMANDS.values()), key=sorted
    ), by_session
    pids = {r["data"]["session"]["guardPid"] for r in attributed}
    assert len(pids) == 3  # one sidecar per pi
    ended = [r for r in records if r["event"] == "session.ended"]
    assert len(ended) == 3 and {e["data"]["reason"] for e in ended} == {"shutdown"}

    report = json.loads(world.cli("audit", "report", "--json").stdout)
    per_session = report["summary"]["bySession"]
    blocked_in = [s for s, c in per_session.items() if c["blocked"] == 1]
    (rm_session,) = [s for s, calls in by_session.items() if "rm -rf a" in calls]
    assert blocked_in == [rm_session]  # the no-UI block of rm -rf a, in its own session
    assert set(per_session) == {rm_session}  # the echoes ran local-safe: nothing to report
