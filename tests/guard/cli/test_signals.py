"""Every long-running command ends cleanly on SIGINT and SIGTERM, whatever dispositions it
inherited: a process started in the background of a non-interactive shell (a CI runner, a
script) inherits SIGINT ignored, and Python then raises no ``KeyboardInterrupt``. Each case
starts the command with SIGINT ignored (as such a shell would), and with it at its default.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


STARTS: dict[str, Callable[[], None]] = {"ignored": _ignore_sigint, "default": _default_sigint}


def started(args: list[str], preexec: Callable[[], None], ready: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    seen = ""
    while ready not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert ready in seen, seen
    return proc


def stopped_by(proc: subprocess.Popen[str], sig: signal.Signals) -> float:
    began = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running 20 s after {sig.name}")
    return time.monotonic() - began


@pytest.mark.parametrize("start", sorted(STARTS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_approvals_serve_ends_and_closes_its_page(
    tmp_path: Path, start: str, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    proc = started(
        ["--home", str(home), "approvals", "serve"], STARTS[start], "operator-guard approval page"
    )
    assert stopped_by(proc, sig) < 10
    assert proc.returncode == 0


@pytest.mark.parametrize("start", sorted(STARTS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_operator_enroll_ends_without_enrolling(
    tmp_path: Path, start: str, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with socket.socket() as probe:  # a free port (enroll needs a fixed one: the passkey's origin)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["--home", str(home), "operator", "enroll", "--port", str(port), "--label", "t"]
    proc = started(args, STARTS[start], "passkey enrolment")
    assert stopped_by(proc, sig) < 10
    assert proc.returncode == 3  # not enrolled
    assert not (home / "keyring.json").exists() or b"operators" not in (
        home / "keyring.json"
    ).read_bytes().replace(b'"operators": []', b"")


@pytest.mark.parametrize("start", sorted(STARTS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_sidecar_ends_cleanly_and_logs_its_end(
    tmp_path: Path, start: str, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard", "--home", str(home), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=STARTS[start],
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(
        '{"jsonrpc":"2.0","id":1,"method":"sandbox.plan","params":{"cwd":"'
        + str(tmp_path)
        + '","sessionId":"s1"}}\n'
    )
    proc.stdin.flush()
    assert '"id":1' in proc.stdout.readline()
    assert stopped_by(proc, sig) < 10
    assert proc.returncode == 0
    log = (home / "audit.jsonl").read_text()
    assert '"event":"session.started"' in log.replace(" ", "")
    assert '"event":"session.ended"' in log.replace(" ", "")
