"""pi's start with the guard: pi does not wait for the sidecar, and nothing runs unjudged.

The shim starts the sidecar when pi loads it and lets the session start at once; the planner
tool is registered from ``tools.json`` (written by the install), so the model's first request
lists it although no sidecar has answered yet. A hostile model answers at once with calls; each
waits for the sidecar's start (the session's ``sandbox.plan``) and is judged after it. Here the
sidecar is made slow to start (its Python behind a ``sleep``), so the calls certainly arrive
first.
"""

from __future__ import annotations

import sys
import time

import pytest

from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, turns

pytestmark = [pytest.mark.every_pi, pytest.mark.e2e]

SLOW_START_S = 1.5


def _slow_python(world: World) -> str:
    slow = world.tmp / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep {SLOW_START_S}\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    return str(slow)


def test_calls_made_before_the_sidecar_answers_wait_for_it_and_are_judged(
    world: World, model_server: ScriptedModelServer
) -> None:
    world.install(python=_slow_python(world))
    model_server.add_scenario(
        "start-race",
        turns(bash("rm -rf build"), bash("echo raced > raced.txt"), bash("rm -rf dist")),
    )
    before = len(model_server.requests)
    started = time.monotonic()
    done = world.print_mode("scenario:start-race")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started >= SLOW_START_S
    # The model's first request, sent before any sidecar answered, lists the planner tool.
    first = model_server.requests[before]
    names = [tool["function"]["name"] for tool in first.get("tools", [])]
    assert "operator_confirmation_implementation_channel_plan" in names, names
    # Both destructive calls were judged (print mode has no UI: blocked), the safe one ran
    # in the session's sandbox, and all of it after the session started.
    assert (world.project / "build" / "keep.txt").exists()
    assert (world.project / "dist" / "keep.txt").exists()
    assert (world.project / "raced.txt").read_text() == "raced\n"
    assert done.stderr.count("operator-guard blocked bash") == 2, done.stderr
    events = [r["event"] for r in world.audit()]
    declined = [r["data"]["reason"] for r in world.audit("confirmation.declined")]
    assert declined == ["no-ui", "no-ui"]
    assert events.count("session.started") == 1
    first_call = min(events.index("confirmation.declined"), events.index("tool.executed"))
    assert events.index("session.started") < first_call
    assert events[-1] == "session.ended"
    assert world.cli("audit", "verify").returncode == 0


def test_a_sidecar_that_never_answers_blocks_every_call_with_the_reason(
    world: World, model_server: ScriptedModelServer
) -> None:
    hung = world.tmp / "hung-python"
    hung.write_text("#!/bin/sh\nexec sleep 600\n")
    hung.chmod(0o755)
    world.install(python=str(hung))
    config = world.agent_dir / "extensions" / "operator-guard" / "guard.json"
    config.write_text(
        config.read_text().replace('"startTimeoutMs": 30000', '"startTimeoutMs": 1500')
    )
    model_server.add_scenario("hung-start", turns(bash("echo hi > hi.txt"), bash("rm -rf build")))
    done = world.print_mode("scenario:hung-start")
    assert done.returncode == 0, done.stderr
    assert not (world.project / "hi.txt").exists()
    assert (world.project / "build" / "keep.txt").exists()
    assert done.stderr.count("operator-guard blocked bash") == 2, done.stderr
    assert done.stderr.count("[reason: sidecar-unavailable]") == 2, done.stderr
    assert "gave no answer" in done.stderr or "exited" in done.stderr, done.stderr
