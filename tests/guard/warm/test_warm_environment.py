"""What `ps` shows of a warm start: the fork server's command line (the interpreter, the home
and the idle time, nothing secret) for the server and every sidecar it forked, and in their
environment (`ps e`, `/proc/<pid>/environ`) only what Python reads at its start: never the
rest of the environment of the session that started the server (a provider's API key), which
would outlive that session and show under every later session's sidecar."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from guard._home import WARM_SOCKET_FILE
from guard._pi import warm_server
from guard._warm import facts

from .conftest import Launch, alive, parent_of, wait_for

pytestmark = pytest.mark.integration

REPO_PYTHON = [sys.executable, "-I", "-m", "guard._warm"]
"""The launcher as installed: the fork server it starts runs this very code."""

FIRST_KEY = "sk-first-session-7f3a"
SECOND_KEY = "sk-second-session-91bc"


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode(errors="replace").split("=", 1) for item in raw.split(b"\0") if item)
    return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}


def shows(pid: int, secret: str) -> bool:
    """Whether process ``pid``'s environment holds ``secret`` (asked so, a failure does not
    print the environment)."""
    return secret in environ(pid).values()


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")


def test_a_fork_server_and_its_sidecars_show_no_secret_of_the_session_that_started_it(
    home: Path, project: Path
) -> None:
    first = Launch(home, project, REPO_PYTHON, idle="5", ANTHROPIC_API_KEY=FIRST_KEY,
                   TZ="UTC")  # fmt: skip
    assert first.sidecar_pid() == first.proc.pid  # cold: it starts a server for next time
    assert shows(first.proc.pid, FIRST_KEY)  # pi's child has pi's environment
    wait_for(lambda: (home / WARM_SOCKET_FILE).is_socket(), what="a fork server")
    server = warm_server(home).pid
    assert server is not None
    assert not shows(server, FIRST_KEY)
    started = environ(server)
    assert sorted(set(started) - set(facts.startup_env(started))) == []  # names only
    assert started["TZ"] == "UTC"  # what Python reads at its start is kept (and compared)
    assert cmdline(server)[1:] == ["-I", "-m", "guard._warm", "--fork-server", str(home), "5.0"]

    second = Launch(home, project, REPO_PYTHON, idle="5", ANTHROPIC_API_KEY=SECOND_KEY,
                    TZ="UTC")  # fmt: skip
    sidecar = second.sidecar_pid()
    assert sidecar != second.proc.pid and parent_of(sidecar) == server  # warm
    assert not shows(sidecar, FIRST_KEY) and not shows(sidecar, SECOND_KEY)
    assert cmdline(sidecar) == cmdline(server)  # a fork: `ps` shows the server's line
    assert not any(FIRST_KEY in word or SECOND_KEY in word for word in cmdline(sidecar))
    # The sidecar itself runs with its own launcher's environment (the home it names).
    assert second.call("health")["result"]["home"] == str(home)
    assert second.plan(project, "s2")["cwd"] == str(project)
    assert second.end() == 0 and first.end() == 0
    wait_for(lambda: not alive(server), timeout=20, what="the idle fork server's end")
