"""Real launchers through a real fork server: each session its own sidecar, signals passed on
and ends reported as they happened, and a cold sidecar whenever the warm start is off."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from guard._home import WARM_SOCKET_FILE
from guard._pi import check_warm, warm_server

from .conftest import Launch, Server, alive, audit_events, parent_of, wait_for

pytestmark = pytest.mark.integration

REPO_PYTHON = [sys.executable, "-I", "-m", "guard._warm"]
"""The launcher as installed: the fork server it starts runs this very code."""


def verify_log(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "guard", "--home", str(home), "audit", "verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_two_launches_get_two_sidecars_of_their_own(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    first = Launch(home, project, warm_python)
    second = Launch(home, project, warm_python)
    first.plan(project, "one")
    second.plan(project, "two")
    pids = {first.sidecar_pid(), second.sidecar_pid()}
    assert len(pids) == 2
    assert first.proc.pid not in pids and second.proc.pid not in pids  # not started cold
    assert {parent_of(pid) for pid in pids} == {server.pid}  # forked by the fork server
    reply = first.call("evaluate", {"toolName": "bash", "input": {"command": "echo hi"},
                                    "cwd": str(project), "toolCallId": "c1", "hasUi": True})  # fmt: skip
    assert reply["result"]["evaluation"]["verdict"] == "allow"
    assert first.end() == 0
    assert second.end() == 0
    started = audit_events(home, "session.started")
    ended = audit_events(home, "session.ended")
    assert sorted(r["data"]["session"]["guardPid"] for r in started) == sorted(pids)
    assert sorted(r["data"]["session"]["id"] for r in ended) == ["one", "two"]
    verify_log(home)


def test_sigterm_to_the_launcher_ends_the_sidecar_cleanly(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    launch = Launch(home, project, warm_python)
    launch.plan(project, "s")
    sidecar = launch.sidecar_pid()
    launch.kill(signal.SIGTERM)
    assert launch.proc.wait(30) == 0  # the sidecar's own clean exit, passed on
    wait_for(lambda: not alive(sidecar), what="the sidecar's end")
    (ended,) = audit_events(home, "session.ended")
    assert ended["data"]["session"]["guardPid"] == sidecar
    verify_log(home)


def test_a_killed_launcher_ends_its_sidecar(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    launch = Launch(home, project, warm_python)
    launch.plan(project, "s")
    sidecar = launch.sidecar_pid()
    launch.kill(signal.SIGKILL)
    assert launch.proc.wait(30) == -signal.SIGKILL
    wait_for(lambda: not alive(sidecar), what="the sidecar's end")
    (ended,) = audit_events(home, "session.ended")
    assert ended["data"]["session"]["guardPid"] == sidecar
    verify_log(home)


def test_a_killed_sidecar_ends_its_launcher_by_the_same_signal(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    launch = Launch(home, project, warm_python)
    launch.plan(project, "s")
    os.kill(launch.sidecar_pid(), signal.SIGKILL)
    assert launch.proc.wait(30) == -signal.SIGKILL


def test_the_sidecar_s_exit_code_is_the_launcher_s(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    """A sidecar that cannot open its home ends with the code a cold one ends with."""
    (home / "signing.key").mkdir()  # no key can be read or made there
    warm = Launch(home, project, warm_python)
    warm_code = warm.end()
    cold = Launch(home, project, warm_python, idle="0")
    assert warm_code == cold.end()


def test_sigint_is_passed_on_even_when_the_launcher_ignores_it(
    home: Path, project: Path, server: Server, warm_python: list[str]
) -> None:
    launch = Launch(home, project, warm_python)
    launch.plan(project, "s")
    sidecar = launch.sidecar_pid()
    launch.kill(signal.SIGINT)
    assert launch.proc.wait(30) == 0
    assert not alive(sidecar)


def test_with_the_warm_start_off_the_launcher_becomes_the_cold_sidecar(
    home: Path, project: Path, warm_python: list[str]
) -> None:
    launch = Launch(home, project, warm_python, idle="0")
    assert launch.sidecar_pid() == launch.proc.pid  # exec'd in place
    assert launch.end() == 0
    time.sleep(1.5)
    assert warm_server(home).pid is None  # and no fork server was started


def test_without_a_server_the_launcher_starts_cold_and_leaves_one_for_next_time(
    home: Path, project: Path
) -> None:
    launch = Launch(home, project, REPO_PYTHON, idle="3")
    assert launch.sidecar_pid() == launch.proc.pid
    wait_for(lambda: (home / WARM_SOCKET_FILE).is_socket(), what="a fork server")
    pid = warm_server(home).pid
    assert pid is not None
    assert launch.end() == 0
    second = Launch(home, project, REPO_PYTHON, idle="3")
    sidecar = second.sidecar_pid()
    assert sidecar != second.proc.pid and parent_of(sidecar) == pid
    assert second.end() == 0
    # Idle for its 3 s, it ends (its socket goes with it).
    wait_for(lambda: not alive(pid), timeout=20, what="the idle fork server's end")
    assert not (home / WARM_SOCKET_FILE).exists()


def test_one_fork_server_per_home(home: Path, project: Path, server: Server) -> None:
    second = subprocess.Popen(
        [sys.executable, "-I", "-m", "guard._warm", "--fork-server", str(home), "30"],
        stdin=subprocess.DEVNULL,
    )
    assert second.wait(30) == 0  # it found the lock taken and left
    assert warm_server(home).pid == server.pid


def test_a_fork_server_ends_when_its_home_goes(tmp_path: Path, warm_python: list[str]) -> None:
    home = tmp_path / "gone"
    home.mkdir(mode=0o700)
    server = Server(home, warm_python, idle="600")
    (home / WARM_SOCKET_FILE).unlink()
    server.proc.wait(20)
    started = Server(home, warm_python, idle="600")
    moved = tmp_path / "moved"
    home.rename(moved)
    home.mkdir(mode=0o700)  # another home where it was
    started.proc.wait(20)


def test_doctor_reports_the_fork_server(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_WARM_IDLE", "30")
    running = check_warm(home)
    assert (running.status, running.reason) == ("ok", "fork-server-running")
    assert f"pid {server.pid}" in running.detail and "MiB resident" in running.detail
    server.stop()
    assert check_warm(home).reason == "no-fork-server"
    monkeypatch.setenv("PI_OPERATOR_GUARD_WARM_IDLE", "0")
    assert check_warm(home).reason == "warm-start-off"
