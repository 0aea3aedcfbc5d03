"""pi's exit with the guard: nothing is lost when pi is killed at any point of it.

pi writes its answer, then ends the session: the shim closes the sidecar's stdin, and the
sidecar answers what was already sent, writes ``session.ended`` and exits. Each run here kills
pi at a random moment of that exit, the way pi can end: ``SIGKILL`` or ``SIGTERM`` to pi alone,
or ``SIGINT`` / ``SIGTERM`` to its whole process group (a terminal's Ctrl-C reaches the
sidecar too). Whatever the moment, the log verifies and every session's records are there:
``session.started``, its call's ``tool.executed`` and ``session.ended``.

A session that ends before its sidecar has answered anything (a prompt answered without a tool
call, faster than the sidecar's Python starts) does not keep pi waiting: pi ends at once, and
the sidecar, on its own, reads what the shim sent (the session's start), writes
``session.started`` and ``session.ended`` and exits, pi killed or not.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.pi.scripted_model import MODEL_ID, PROVIDER, ScriptedModelServer, Turn

from .pi_world import World, bash, sidecar_pids, turns, wait_gone

pytestmark = pytest.mark.e2e

SLOW_START_S = 3.0  # longer than pi takes to answer without a tool call and end

KILLS: tuple[tuple[str, signal.Signals], ...] = (
    ("pi", signal.SIGKILL),
    ("group", signal.SIGINT),
    ("pi", signal.SIGTERM),
    ("group", signal.SIGTERM),
)


def test_pi_killed_at_random_points_of_its_exit_leaves_the_log_intact_and_whole(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario("exit-echo", turns(bash("echo exit-e2e")))
    seed = int(os.environ.get("PI_GUARD_TEST_SEED", time.time_ns() % 10**6))
    rng = random.Random(seed)
    runs = 6
    for n in range(runs):
        where, sig = KILLS[n % len(KILLS)]
        command = ("-p", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session")
        pi = subprocess.Popen(
            world.pi.command(*command, "scenario:exit-echo"),
            cwd=world.project,
            env=world.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # its own group: a signal to the group reaches no test
            # SIGINT at its default in pi and the sidecar, whatever this process inherited
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert pi.stdout is not None
        assert "done" in pi.stdout.readline()  # the answer is out: pi is ending the session
        sidecars = sidecar_pids(pi.pid)
        time.sleep(rng.uniform(0.0, 0.2))
        try:
            if where == "pi":
                os.kill(pi.pid, sig)
            else:
                os.killpg(pi.pid, sig)
        except ProcessLookupError:
            pass  # pi had already exited: that end counts too
        pi.wait(timeout=30)
        for pid in sidecars:
            wait_gone(pid, timeout=30)
    note = f"(seed {seed}: PI_GUARD_TEST_SEED={seed} repeats it)"
    verify = world.cli("audit", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr + note
    executed = [r for r in world.audit("tool.executed") if r["data"]["toolName"] == "bash"]
    assert len(world.audit("session.started")) == runs, note
    assert len(executed) == runs, note
    assert len(world.audit("session.ended")) == runs, note


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _new_pids(path: Path, seen: set[int], timeout: float = 10.0) -> list[int]:
    """The pids written to ``path`` that are not in ``seen`` (waiting for one to appear)."""
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text().split() if path.exists() else []
        new = [int(p) for p in lines if p.isdigit() and int(p) not in seen]
        if new or time.monotonic() > deadline:
            return new
        time.sleep(0.02)


@pytest.mark.every_pi
def test_pi_does_not_wait_for_a_sidecar_still_starting_and_the_session_is_whole(
    world: World, model_server: ScriptedModelServer
) -> None:
    slow = world.tmp / "slow-python"  # the sidecar's Python behind a sleep: it starts late
    spawned = world.tmp / "sidecar-pids"  # each sidecar's pid (exec keeps it), as it starts
    slow.write_text(
        f'#!/bin/sh\necho $$ >> "{spawned}"\nsleep {SLOW_START_S}\nexec "{sys.executable}" "$@"\n'
    )
    slow.chmod(0o755)
    world.install(python=str(slow))
    model_server.add_scenario("exit-none", [Turn(text="done")])
    seed = int(os.environ.get("PI_GUARD_TEST_SEED", time.time_ns() % 10**6))
    rng = random.Random(seed)
    note = f"(seed {seed}: PI_GUARD_TEST_SEED={seed} repeats it)"
    ends: tuple[signal.Signals | None, ...] = (None, signal.SIGKILL, signal.SIGTERM)
    seen: set[int] = set()
    for sig in ends:
        pi = subprocess.Popen(
            world.pi.command(
                "-p", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session",
                "scenario:exit-none",
            ),
            cwd=world.project,
            env=world.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )  # fmt: skip
        assert pi.stdout is not None
        assert "done" in pi.stdout.readline()
        # Read from the wrapper, not from pi's children: pi may already have ended here,
        # its sidecar then a child of another process.
        sidecars = _new_pids(spawned, seen)
        seen.update(sidecars)
        assert sidecars, "the shim started the sidecar when pi loaded it"
        if sig is not None:
            time.sleep(rng.uniform(0.0, 0.2))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pi.pid, sig)
        pi.wait(timeout=30)
        # pi ended while its sidecar was still starting: it did not wait for it.
        assert any(map(_alive, sidecars)), f"pi waited for its sidecar {note}"
        for pid in sidecars:
            wait_gone(pid, timeout=30)
    verify = world.cli("audit", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr + note
    started_ids = [r["data"]["session"]["guardPid"] for r in world.audit("session.started")]
    ended_ids = [r["data"]["session"]["guardPid"] for r in world.audit("session.ended")]
    assert len(started_ids) == len(ends), note
    assert sorted(ended_ids) == sorted(started_ids), note
    assert {r["data"]["reason"] for r in world.audit("session.ended")} == {"shutdown"}, note
