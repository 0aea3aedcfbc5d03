"""Who gets no sidecar from a fork server, attacked as a hostile model would: from the real
sandbox of an agent command (every spelling of reaching the socket), from other namespaces,
as another user, with code changed since the server imported it. Every refusal leaves the
launcher free to start a cold sidecar, and none yields a forked one."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from guard._home import WARM_SOCKET_FILE

from .conftest import (
    Launch,
    Server,
    alive,
    audit_events,
    code_copy,
    env_for,
    parent_of,
    wait_for,
)

pytestmark = pytest.mark.integration

PROBE = """
import sys
from pathlib import Path
from guard._warm.launch import Refused, handoff
try:
    handoff(Path(sys.argv[1]), ("serve",))
except Refused as refused:
    print(refused.args[0])
else:
    print("TAKEN")
"""
"""A launcher's handshake alone: prints the refusal's reason, or TAKEN."""


def probe(home: Path, code: Path, prefix: list[str] = []) -> str:  # noqa: B006
    """Run :data:`PROBE` on the code in ``code`` (as the fork server's) under ``prefix``."""
    script = f"import sys; sys.path.insert(0, {str(code)!r})\n{PROBE}"
    done = subprocess.run(
        [*prefix, sys.executable, "-I", "-c", script, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(home),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if parent_of(int(entry.name)) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError):
                continue
    return found


def test_the_probe_is_taken_from_outside(home: Path, server: Server, warm_code: Path) -> None:
    """The control: the same handshake from an ordinary process gets a sidecar."""
    assert probe(home, warm_code) == "TAKEN"


@pytest.mark.parametrize(
    "prefix",
    [
        ["unshare", "-m"],
        ["unshare", "-n"],
        ["unshare", "-U", "-r"],
        ["unshare", "-p", "-f"],
        ["unshare", "-i"],
        ["unshare", "-u"],
    ],
    ids=["mount", "net", "user", "pid", "ipc", "uts"],
)
def test_another_namespace_is_refused(
    home: Path, server: Server, prefix: list[str], warm_code: Path
) -> None:
    if shutil.which(prefix[0]) is None or subprocess.run([*prefix, "true"]).returncode:
        pytest.fail(f"{' '.join(prefix)} cannot run here: this test needs it")
    assert probe(home, warm_code, prefix) in {"other-namespace", "peer-unknown"}
    assert children_of(server.pid) == []


def test_a_sandbox_with_the_home_mounted_in_is_refused(
    home: Path, server: Server, warm_code: Path
) -> None:
    """A hole in the sandbox that showed the home: bubblewrap's namespaces still refuse."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    prefix = [bwrap, "--unshare-pid", "--unshare-user", "--die-with-parent", "--ro-bind", "/",
              "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(home), str(home), "--"]  # fmt: skip
    assert probe(home, warm_code, prefix) in {"other-namespace", "peer-unknown"}
    assert children_of(server.pid) == []


ATTACKS = {
    "python-socket": (
        "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]);"
        ' print("CONNECTED")\' {socket}'
    ),
    "proc-root": (
        "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX);"
        ' s.connect("/proc/{server}/root" + sys.argv[1]); print("CONNECTED")\' {socket}'
    ),
    "guard-launcher": "{python} -I -c {probe} {home}",
    "perl": "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => $ARGV[0]) and print"
    ' "CONNECTED\\n"\' {socket}',
    "listing": "ls -la {home}; cat {home}/warm.lock",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_agent_command_in_the_real_sandbox_reaches_no_fork_server(
    home: Path, project: Path, server: Server, attack: str, warm_python: list[str]
) -> None:
    """The session's own sandbox (the plan a warm sidecar gave), every spelling of the way
    in: the home is not there, /proc shows no process outside, the launcher finds nothing."""
    launch = Launch(home, project, warm_python)
    plan = launch.plan(project, "attacked")
    assert plan["state"] == "sandboxed", plan
    forked_before = children_of(server.pid)
    command = ATTACKS[attack].format(
        socket=shlex.quote(str(home / WARM_SOCKET_FILE)),
        server=server.pid,
        python=shlex.quote(sys.executable),
        probe=shlex.quote(PROBE),
        home=shlex.quote(str(home)),
    )
    done = subprocess.run(
        ["bash", "-c", f"{plan['prefix']} {shlex.quote(command)}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env=env_for(home),
        stdin=subprocess.DEVNULL,
    )
    assert "CONNECTED" not in done.stdout
    assert "TAKEN" not in done.stdout
    assert "warm.sock" not in done.stdout  # the home is an empty tmpfs in there
    assert children_of(server.pid) == forked_before
    assert launch.end() == 0
    assert len(audit_events(home, "session.started")) == 1  # the launch's own, nobody else's


def test_another_user_cannot_reach_the_socket(home: Path, server: Server) -> None:
    if os.getuid() != 0:
        pytest.fail("this test switches users: run it as root (the suite's machine is)")
    script = (
        "import os, socket, sys; os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n    s.connect(sys.argv[1])\nexcept OSError as e:\n    print(type(e).__name__)\n"
        "else:\n    print('CONNECTED')\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(home / WARM_SOCKET_FILE)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.strip() == "PermissionError", done.stderr


def test_another_user_who_reaches_the_socket_is_refused_and_forks_nothing(
    home: Path, server: Server, warm_code: Path
) -> None:
    """Past the home's permissions (a hard link to the socket where another user can reach
    it): the server reads the peer's credentials and refuses before it reads the request."""
    if os.getuid() != 0:
        pytest.fail("this test switches users: run it as root (the suite's machine is)")
    from guard._warm.launch import _request
    from guard._warm.wire import HEADER, MAGIC

    payload = _request(("serve",)).encode()
    open_dir = Path(tempfile.mkdtemp(prefix="pi-guard-warm-link-"))  # where the tests' tmp is
    try:
        open_dir.chmod(0o755)
        link = open_dir / "sock"
        os.link(home / WARM_SOCKET_FILE, link)
        link.chmod(0o777)
        script = (
            "import os, socket, sys\n"
            "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "payload = bytes.fromhex(sys.argv[3])\n"
            "socket.send_fds(s, [bytes.fromhex(sys.argv[2])], [0, 1, 2, 0])\n"
            "try:\n    s.sendall(payload); s.shutdown(socket.SHUT_WR)\n"
            "except OSError:\n    pass\n"
            "print(s.recv(200).decode().strip())\n"
        )
        head = HEADER.pack(MAGIC, len(payload))
        done = subprocess.run(
            [sys.executable, "-I", "-c", script, str(link), head.hex(), payload.hex()],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    finally:
        shutil.rmtree(open_dir, ignore_errors=True)
    assert done.stdout.strip() == '{"refused":"other-user"}', done.stderr
    assert children_of(server.pid) == []
    assert probe(home, warm_code) == "TAKEN"  # and it still serves its own user


def test_a_forged_request_is_refused_and_forks_nothing(
    home: Path, server: Server, warm_code: Path
) -> None:
    """Same user, same namespaces, but not the protocol: a command line other than serve,
    another Python, another start environment, too few fds, a lying header."""
    script = r"""
import json, os, socket, struct, sys
from guard._warm import wire
from guard._warm.launch import _request
path = sys.argv[1]
def attempt(payload, fds=(0, 1, 2, 0), header=None):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    head = header or wire.HEADER.pack(wire.MAGIC, len(payload))
    socket.send_fds(s, [head], list(fds))
    try:  # a server that refuses at the header may close before the payload
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError):
        pass
    print(s.recv(200).decode().strip())
good = _request(("serve",))
attempt(good._replace(argv=("keygen",)).encode())
attempt(good._replace(argv=("serve", "--home", "/tmp")).encode())
attempt(good._replace(python="/usr/bin/python3").encode())
attempt(good._replace(env={**good.env, "LD_PRELOAD": "/tmp/evil.so"}).encode())
attempt(good.encode(), fds=(0, 1))
attempt(b"{}")
attempt(b"not json")
attempt(good.encode(), header=struct.pack("!4sI", b"XXXX", 10))
"""
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(warm_code)!r})\n" + script,
            str(home / WARM_SOCKET_FILE),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(home),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    replies = done.stdout.splitlines()
    assert replies == [
        '{"refused":"argv-not-serve"}',
        '{"refused":"argv-not-serve"}',
        '{"refused":"other-python"}',
        '{"refused":"other-start-environment"}',
        '{"refused":"bad-fds"}',
        '{"refused":"missing-argv"}',
        '{"refused":"payload-not-json"}',
        '{"refused":"bad-header"}',
    ]
    assert children_of(server.pid) == []
    assert probe(home, warm_code) == "TAKEN"  # and it still serves


def test_changed_code_is_refused_and_the_stale_server_ends(tmp_path: Path, home: Path,
                                                           project: Path) -> None:  # fmt: skip
    """An upgrade (here: one file's mtime) since the server imported its code: the next
    launch is refused and starts cold, and the stale server ends."""
    copy = tmp_path / "code"
    python = code_copy(copy)  # this test's own: it changes it
    server = Server(home, python)
    try:
        warm = Launch(home, project, python)
        sidecar = warm.sidecar_pid()
        assert sidecar != warm.proc.pid and parent_of(sidecar) == server.pid
        assert warm.end() == 0
        changed = copy / "guard" / "_policy" / "engine.py"
        info = changed.stat()
        os.utime(changed, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))
        cold = Launch(home, project, python, idle="2")
        assert cold.sidecar_pid() == cold.proc.pid  # refused: the cold sidecar, exec'd in place
        assert cold.end() == 0
        wait_for(lambda: server.proc.poll() is not None, timeout=20, what="the stale server")
    finally:
        server.stop()
    time.sleep(0.1)
    assert not alive(server.pid)
