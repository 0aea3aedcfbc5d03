"""The page's login lock-out cannot be triggered from inside the agent's sandbox.

With ``[approvals] page = true`` and the sandbox's default ``open`` network, a command of the
agent's shares loopback with the page and finds it in ``/proc/net/tcp``. Five wrong tokens
from there once locked the operator's login. Now the page finds the process at the other end
of each refused request (its socket by both addresses, then who holds it) and counts a wrong
token only from a process outside any bubblewrap sandbox: the attack leaves the operator's
printed login working, and each refusal is audited as ``sandboxed-peer``. A wrong token from
outside (a separate process, the headless chromium the page tests drive) still counts.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from audit.verify import read_records
from guard._approvals.peers import place_of, tcp_peer_place
from guard._approvals.web import MAX_FAILED_LOGINS, ApprovalPage
from guard._hermetic import system_program
from tests.guard.sandbox.conftest import Layout, make_layout, needs_bwrap, run_proved

pytestmark = pytest.mark.integration

ATTEMPTS = 4 * MAX_FAILED_LOGINS


class Served:
    def __init__(self, home: Path) -> None:
        self.refused: list[str] = []
        self.page = ApprovalPage(home, on_refused=lambda why, _: self.refused.append(why))
        self.page.start()

    def get(self, target: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.page.port, timeout=10)
        conn.request("GET", target, headers={"Host": f"localhost:{self.page.port}"})
        status = conn.getresponse().status
        conn.close()
        return status


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    home = tmp_path / "page-home"
    home.mkdir(mode=0o700)
    made = Served(home)
    yield made
    made.page.close()


def _attacks(port: int) -> list[str]:
    """Wrong tokens from inside, in several spellings of the same request."""
    here = f"127.0.0.1:{port}"
    raw = f"GET /login?token=raw HTTP/1.1\\r\\nHost: localhost:{port}\\r\\n\\r\\n"
    return [
        # curl, by IPv4 and by the IPv4-mapped IPv6 address (a tcp6 socket)
        f"for i in $(seq {MAX_FAILED_LOGINS}); do "
        f"curl -s -o /dev/null -H 'Host: localhost:{port}' 'http://{here}/login?token=x'$i; done",
        f"curl -s -o /dev/null -H 'Host: localhost:{port}' "
        f"'http://[::ffff:127.0.0.1]:{port}/login?token=mapped'",
        # the login address itself, as a browser would send it
        f"curl -s -o /dev/null 'http://localhost:{port}/login?token=guess'",
        # bash's /dev/tcp: a raw request, read to the end
        f"exec 3<>/dev/tcp/127.0.0.1/{port}; printf '{raw}' >&3; cat <&3 >/dev/null",
        # fire and forget: sent and closed before the page looks
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}; printf '{raw}' >&3)",
        # another program, another process per request
        f'{sys.executable} -c "import urllib.request as u\n'
        f"for i in range({MAX_FAILED_LOGINS}):\n"
        f"  r = u.Request('http://{here}/login?token=py%d' % i, "
        f"headers={{'Host': 'localhost:{port}'}})\n"
        f"  try: u.urlopen(r)\n"
        f'  except Exception: pass"',
        # a renamed process in the background, waited for
        f"(exec -a chromium curl -s -o /dev/null -H 'Host: localhost:{port}' "
        f"'http://{here}/login?token=renamed') & wait",
    ]


@needs_bwrap
def test_wrong_tokens_from_a_sandboxed_command_never_lock_the_operator_out(
    tmp_path: Path, served: Served
) -> None:
    login = urlsplit(served.page.login_url)  # printed to the operator's terminal
    layout: Layout = make_layout(tmp_path)
    for attack in _attacks(served.page.port) * 2:
        run_proved(layout, attack)
    assert len(served.refused) >= ATTEMPTS
    # every refusal named the sandbox (or, sent and gone, a peer not found); none counted
    assert set(served.refused) <= {"sandboxed-peer", "unknown-peer"}
    assert "sandboxed-peer" in served.refused
    assert served.get(f"{login.path}?{login.query}") == 303  # the operator's login works


def test_wrong_tokens_from_outside_still_lock(served: Served) -> None:
    """A separate process of the operator's (curl) is placed outside: its wrong tokens count,
    and the last one is the lock-out."""
    login = urlsplit(served.page.login_url)
    curl = system_program("curl")
    for i in range(MAX_FAILED_LOGINS):
        subprocess.run(
            [curl, "-s", "-o", "/dev/null", "-H", f"Host: localhost:{served.page.port}",
             f"http://127.0.0.1:{served.page.port}/login?token=guess{i}"],
            check=True, timeout=30,
        )  # fmt: skip
    assert served.get(f"{login.path}?{login.query}") == 403
    assert served.refused == ["bad-login"] * (MAX_FAILED_LOGINS - 1) + [
        "login-locked-out",
        "login-locked",
    ]


def test_the_headless_browser_is_not_seen_as_sandboxed(served: Served, page: Page) -> None:
    """The browser the page tests drive is the operator's kind of peer: its wrong tokens
    count (were it placed as sandboxed, nothing would ever lock)."""
    login = urlsplit(served.page.login_url)
    for i in range(MAX_FAILED_LOGINS):
        page.goto(f"{served.page.url}login?token=wrong{i}")
    assert served.refused[-1] == "login-locked-out"
    assert "sandboxed-peer" not in served.refused and "unknown-peer" not in served.refused
    page.goto(f"{served.page.url}login?{login.query}")
    assert "used already" in page.content()  # locked: even the right token is refused


def test_places() -> None:
    """This process is outside; a bwrap child is in a bubblewrap sandbox; a pid namespace
    made by another program (as a browser's own sandbox makes) is not; no pid is nobody."""
    assert place_of(os.getpid()) == "outside"
    assert place_of(0) == "unknown" and place_of(-1) == "unknown"
    probe = "import os, sys; print(os.getpid()); sys.stdout.flush(); sys.stdin.read()"
    bwrap = shutil.which("bwrap", path="/usr/bin:/bin")
    assert bwrap is not None
    makers = {
        "bwrap-sandbox": [bwrap, "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev",
                          "--proc", "/proc"],
        "other-namespace": [system_program("unshare"), "--user", "--map-root-user", "--pid",
                            "--fork"],
    }  # fmt: skip
    for expected, prefix in makers.items():
        child = subprocess.Popen(
            [*prefix, sys.executable, "-c", probe],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert child.stdout is not None
            inner = int(child.stdout.readline())
            assert inner < 10  # its own pid namespace numbers it
            outer = _descendant_running(child.pid, inner)
            assert place_of(outer) == expected, expected
        finally:
            child.kill()
            child.wait()


def _descendant_running(root: int, inner: int) -> int:
    """The pid, in this namespace, of ``root``'s descendant whose own namespace calls it
    ``inner`` (``NSpid`` in its status)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        spaces = fields.get("NSpid", "").split()
        if len(spaces) > 1 and int(spaces[-1]) == inner and _descends(int(entry), root):
            return int(entry)
    raise AssertionError(f"no descendant of {root} is {inner} in its namespace")


def _descends(pid: int, root: int) -> bool:
    while pid > 1:
        if pid == root:
            return True
        status = Path(f"/proc/{pid}/status").read_text()
        pid = int(next(ln for ln in status.splitlines() if ln.startswith("PPid:")).split()[1])
    return False


def test_a_peer_that_is_gone_is_unknown(served: Served) -> None:
    """No socket at that address (the sender closed, or never was): never counted."""
    assert tcp_peer_place(("127.0.0.1", 1), ("127.0.0.1", served.page.port)) == "unknown"
    assert tcp_peer_place(("not-an-address", 1), ("127.0.0.1", 1)) == "unknown"


@needs_bwrap
def test_through_the_sidecars_own_sandbox_the_refusals_are_coalesced_and_audited(
    tmp_path: Path,
) -> None:
    """The session's page (``[approvals] page = true``) attacked from a command run exactly
    as the sidecar's plan runs pi's bash: the operator's login still works after it, and the
    log holds a few ``sandboxed-peer`` records with counts, not one per request."""
    from guard._sidecar.handlers.methods import Sidecar
    from tests.guard.sidecar.test_sidecar_methods import result

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    (home / "operator-guard.toml").write_text(
        f'[approvals]\npage = true\nport = {port}\n[sandbox]\neffects = "off"\n'
    )
    project = tmp_path / "project"
    project.mkdir()
    sidecar = Sidecar(home)
    try:
        params = {"cwd": str(project), "sessionId": "s1", "mode": "tui", "shell": "/bin/bash"}
        plan = result(sidecar, "sandbox.plan", params)
        assert plan["state"] == "sandboxed" and plan["network"] == "open"
        assert sidecar.session.desk.page is not None and sidecar.session.desk.page.port == port
        login = urlsplit(sidecar.session.desk.page.login_url)
        env = {k: v for k, v in os.environ.items() if k not in plan["unsetEnv"]}
        for attack in _attacks(port):
            done = subprocess.run(
                [*plan["argv"], attack], cwd=project, env=env, capture_output=True, text=True,
                timeout=60, check=False, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            assert done.returncode == 0, (attack, done.stderr)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", f"{login.path}?{login.query}", headers={"Host": f"localhost:{port}"})
        assert conn.getresponse().status == 303
        conn.close()
    finally:
        sidecar.close()
    refused = [r.data for r in read_records(home / "audit.jsonl") if r.event == "approval.refused"]
    reasons = {d["reason"] for d in refused}
    assert "sandboxed-peer" in reasons and reasons <= {"sandboxed-peer", "unknown-peer"}
    assert sum(d.get("count") or 1 for d in refused) >= 3 * MAX_FAILED_LOGINS
    assert len(refused) <= 2


@needs_bwrap
def test_approvals_serve_attacked_from_a_sandbox_keeps_the_login_and_a_short_log(
    tmp_path: Path,
) -> None:
    """``pi-guard approvals serve`` (the operator's own terminal) flooded with wrong tokens
    from a sandboxed command: the printed login still works, and the refusals are a few
    coalesced records written by the time it stops, however many requests came."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    serve = subprocess.Popen(
        [sys.executable, "-m", "guard", "--home", str(home), "approvals", "serve"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    flood = 200
    try:
        assert serve.stderr is not None
        lines = [serve.stderr.readline() for _ in range(2)]
        login = urlsplit(lines[1].rsplit(" ", 1)[1].strip())
        port = int(login.port or 0)
        layout = make_layout(tmp_path / "sandbox")
        started = time.monotonic()
        run_proved(
            layout,
            f"for i in $(seq {flood}); do printf 'http://127.0.0.1:{port}/login?token=%s\\n' $i;"
            f" done > urls; curl -s -o /dev/null -H 'Host: localhost:{port}' "
            "--parallel --parallel-max 8 "
            f"$(sed 's/^/--url /' urls)",
        )
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", f"{login.path}?{login.query}", headers={"Host": login.netloc})
        assert conn.getresponse().status == 303
        conn.close()
        flooded = time.monotonic() - started
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=60)
    assert serve.returncode == 0
    refused = [r.data for r in read_records(home / "audit.jsonl") if r.event == "approval.refused"]
    assert {d["reason"] for d in refused} <= {"sandboxed-peer", "unknown-peer"}
    assert sum(d.get("count") or 1 for d in refused) == flood
    # One write of what was heard every two seconds, and one at the end, however slow the
    # machine: a loaded run once wrote 95 records for 200 requests when it wrote every wake.
    assert len(refused) <= 2 * (flooded // 2 + 2)
    assert len(refused) < flood // 4
