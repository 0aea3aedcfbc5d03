"""The bridge inside an ``allowlist`` sandbox, in both languages: ``127.0.0.1:3128`` in the
command's own network reaches the guard's proxy outside (its refusal comes back), the
command's output and exit status are its own, and the bridge dies with the command."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from guard._hermetic import system_program
from guard._policy.settings.models import NetworkSettings, SandboxSettings
from guard._sandbox.argv import build_argv
from guard._sandbox.collect import collect_input
from guard._sandbox.model import ProxyInput
from guard._sandbox.proxy import NetworkProxy
from tests.guard.sandbox.conftest import needs_bwrap

pytestmark = needs_bwrap


@pytest.mark.parametrize("language", ["perl", "python3"])
def test_the_bridge_reaches_the_proxy_and_leaves_the_command_alone(
    tmp_path: Path, language: str
) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    proxy = NetworkProxy(tmp_path / "proxy.sock", ("pypi.org",))
    proxy.start()
    try:
        settings = SandboxSettings(network=NetworkSettings(mode="allowlist", allow=("pypi.org",)))
        inp = collect_input(workspace, home, settings, proxy_socket=str(proxy.socket_path))
        inp = inp.model_copy(
            update={
                "proxy": ProxyInput(socket=str(proxy.socket_path), bridge=system_program(language))
            }
        )
        argv = build_argv(inp)
        command = (
            "curl -s -m 10 http://evil.example/x; echo; "
            "curl -s -m 10 -o /dev/null -w '%{http_code}\\n' https://evil.example/; "
            "echo out-$HTTPS_PROXY; echo err >&2; exit 3"
        )
        started = subprocess.run(
            [*argv, command], capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        refusals = proxy.take_refusals()
        proxy.stop()
    assert started.returncode == 3, started.stderr
    lines = started.stdout.splitlines()
    assert lines[0] == "operator-guard: evil.example:80 is not in the sandbox's network allowlist"
    assert "out-http://127.0.0.1:3128" in lines
    assert started.stderr.strip().endswith("err")
    assert {(r.host, r.port) for r in refusals} == {("evil.example", 80), ("evil.example", 443)}


def test_every_bridge_is_gone_when_the_command_ends(tmp_path: Path) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    proxy = NetworkProxy(tmp_path / "proxy.sock", ())
    proxy.start()
    try:
        settings = SandboxSettings(network=NetworkSettings(mode="allowlist"))
        inp = collect_input(workspace, home, settings, proxy_socket=str(proxy.socket_path))
        marker = f"bridge-marker-{os.getpid()}-{tmp_path.name}"
        done = subprocess.run(
            [*build_argv(inp), f"exec -a {marker} sleep 0.1"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        pgrep = shutil.which("pgrep", path="/usr/bin:/bin")
        assert pgrep is not None
        # Nothing started for that command is left: not the command, and not the bridge
        # (whose command line holds the marker too).
        left = subprocess.run([pgrep, "-f", marker], capture_output=True, check=False)
        assert left.returncode == 1, left.stdout
    finally:
        proxy.stop()
