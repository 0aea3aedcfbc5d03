"""Real launchers, fork servers and sidecars in a temporary home."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from guard._home import WARM_SOCKET_FILE
from guard._pi import warm_server

REPO = Path(__file__).resolve().parents[3]
WRAP = (
    "import os, runpy, sys; "
    "sys.path[:] = [{root!r}, *(p for p in sys.path if os.path.abspath(p or '.') != {repo!r})]; "
    "runpy.run_module('guard._warm', run_name='__main__', alter_sys=True)"
)
"""``python -I -m guard._warm`` run from a copy of the code: a fork server checks that the code
has not changed since it imported it, and the working tree may change while the tests run. The
checkout leaves ``sys.path`` too (an editable install puts it there): a fork server stamps the
mtime of every ``sys.path`` directory but its code's, and the suite makes and removes files at
the checkout's root (a fresh clone's run refused a launch as changed code once)."""


def code_copy(into: Path) -> list[str]:
    """Copy guard, audit and planning into ``into``: the Python command that runs the
    launcher (or the fork server) from there."""
    for package in ("guard", "audit", "planning"):
        shutil.copytree(
            REPO / package, into / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return [sys.executable, "-I", "-c", WRAP.format(root=str(into), repo=str(REPO))]


@pytest.fixture(scope="session")
def warm_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the code made once for the session (where ``warm_python`` runs)."""
    root = tmp_path_factory.mktemp("code")
    code_copy(root)
    return root


@pytest.fixture(scope="session")
def warm_python(warm_code: Path) -> list[str]:
    """The launcher's Python command, on the session's copy of the code."""
    return [sys.executable, "-I", "-c", WRAP.format(root=str(warm_code), repo=str(REPO))]


def env_for(home: Path, idle: str = "30", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_OPERATOR_", "PI_GUARD_"))}
    env.update(PI_OPERATOR_GUARD_HOME=str(home), PI_OPERATOR_GUARD_WARM_IDLE=idle, **extra)
    return env


def wait_for(check: Callable[[], bool], timeout: float = 30.0, what: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


class Server:
    """A fork server started by the test (``--fork-server``), stopped at the end."""

    def __init__(self, home: Path, python: list[str], idle: str = "30") -> None:
        self.home = home
        self.proc = subprocess.Popen(
            [*python, "--fork-server", str(home), idle],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(home.parent / "fork-server.err").open("ab"),
            start_new_session=True,
        )
        wait_for(self.ready, what="the fork server's socket")

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the fork server ended ({self.proc.returncode})")
        return (self.home / WARM_SOCKET_FILE).is_socket() and warm_server(self.home).pid is not None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class Launch:
    """One launcher (what pi spawns) and JSON-RPC over its stdio."""

    def __init__(self, home: Path, cwd: Path, python: list[str], idle: str = "30",
                 **env: str) -> None:  # fmt: skip
        self.proc = subprocess.Popen(
            [*python, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env_for(home, idle, **env),
        )
        self.next_id = 1

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        self.stdin.write(json.dumps(request).encode() + b"\n")
        self.stdin.flush()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.kill()
            assert self.proc.stderr is not None
            raise AssertionError(f"no reply to {method}: {self.proc.stderr.read()[-2000:]!r}")
        reply: dict[str, Any] = json.loads(line)
        assert "result" in reply, reply
        return reply

    def plan(self, project: Path, session: str) -> dict[str, Any]:
        params = {"cwd": str(project), "sessionId": session, "mode": "rpc"}
        return self.call("sandbox.plan", params)["result"]

    def sidecar_pid(self) -> int:
        pid: int = self.call("health")["result"]["pid"]
        return pid

    def end(self, timeout: float = 30.0) -> int:
        self.stdin.close()
        return self.proc.wait(timeout)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.proc.send_signal(sig)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def server(home: Path, warm_python: list[str]) -> Iterator[Server]:
    started = Server(home, warm_python)
    yield started
    started.stop()


def audit_events(home: Path, event: str) -> list[dict[str, Any]]:
    records = []
    for line in (home / "audit.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("event") == event:
            records.append(record)
    return records
