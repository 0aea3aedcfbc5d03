"""``pi-guard sandbox check|run|argv`` as an operator (or the shim) calls them.

In process (:func:`tests.cli_runner.invoke`); the sandboxed commands are real processes, and
the console script runs as one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from guard._cli import ExitCode
from tests.cli_runner import Result, invoke
from tests.guard.sandbox.conftest import SECRET, Layout, needs_bwrap

pytestmark = pytest.mark.integration


def cli(layout: Layout, *args: str) -> Result:
    return invoke("sandbox", *args, home=layout.home)


def no_bwrap(layout: Layout) -> None:
    (layout.home / "operator-guard.toml").write_text('[sandbox]\nbwrap = "/nonexistent/bwrap"\n')


@needs_bwrap
def test_check_ok(layout: Layout) -> None:
    done = cli(layout, "check", "--cwd", str(layout.workspace))
    assert done.returncode == ExitCode.OK, done.stderr
    assert "sandbox:  sandboxed" in done.stdout and "probe:    ok" in done.stdout
    done = cli(layout, "check", "--cwd", str(layout.workspace), "--json")
    assert done.returncode == ExitCode.OK
    data = json.loads(done.stdout)
    assert data["usable"] is True
    assert data["plan"]["state"] == "sandboxed"
    assert data["settings"]["mode"] == "required"


def test_check_without_bwrap(layout: Layout) -> None:
    no_bwrap(layout)
    done = cli(layout, "check", "--cwd", str(layout.workspace), "--json")
    assert done.returncode == ExitCode.SANDBOX == 7
    data = json.loads(done.stdout)
    assert data["probe"]["status"] == "missing-binary"
    assert data["plan"]["state"] == "unavailable"


def test_run_blocked_when_required_and_unavailable(
    layout: Layout,
) -> None:
    no_bwrap(layout)
    done = cli(layout, "run", "--cwd", str(layout.workspace), "--", "touch ran")
    assert done.returncode == ExitCode.SANDBOX
    assert not (layout.workspace / "ran").exists()
    err = done.stderr
    assert "sandbox unavailable" in err and "[reason: missing-binary]" in err


def test_run_opted_out_runs_unsandboxed(layout: Layout) -> None:
    (layout.home / "operator-guard.toml").write_text('[sandbox]\nmode = "off"\n')
    done = cli(layout, "run", "--cwd", str(layout.workspace), "--", f"cat {layout.key} > leaked")
    assert done.returncode == 0
    assert SECRET in (layout.workspace / "leaked").read_text()  # what "off" means
    assert "unsandboxed" in done.stderr


@needs_bwrap
def test_run_exit_status_and_argv_words(layout: Layout) -> None:
    ws = str(layout.workspace)
    assert cli(layout, "run", "--cwd", ws, "--", "exit 42").returncode == 42
    assert cli(layout, "run", "--cwd", ws, "--", "touch", "a b").returncode == 0
    assert (layout.workspace / "a b").exists()
    assert cli(layout, "run", "--cwd", ws, "--", f"cat {layout.key}").returncode == 1
    assert cli(layout, "run", "--cwd", ws).returncode == ExitCode.BAD_INPUT


@needs_bwrap
def test_argv_prints_what_the_spawn_hook_returns(
    layout: Layout,
) -> None:
    command = "printf '%s|' one 'two three'"
    done = cli(layout, "argv", "--cwd", str(layout.workspace), "--command", command)
    assert done.returncode == 0, done.stderr
    wrapped = done.stdout.rstrip("\n")
    assert wrapped.startswith("exec ") and " --unshare-pid " in wrapped
    shell = subprocess.run(
        ["/bin/bash", "-c", wrapped],
        cwd=layout.workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout == "one|two three|"
    done = cli(layout, "argv", "--cwd", str(layout.workspace), "--command", command, "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["command"] == wrapped
    assert data["argv"][-3:] == ["/bin/bash", "-c", command]
    assert data["plan"]["prefix"] + " " in wrapped


def test_argv_unavailable_exits_7(layout: Layout) -> None:
    no_bwrap(layout)
    done = cli(layout, "argv", "--cwd", str(layout.workspace), "--command", "true", "--json")
    assert done.returncode == ExitCode.SANDBOX
    assert json.loads(done.stdout)["plan"]["state"] == "unavailable"


@needs_bwrap
def test_console_script(layout: Layout) -> None:
    script = Path(sys.executable).with_name("pi-guard")
    done = subprocess.run(
        [str(script), "--home", str(layout.home), "sandbox", "run", "--cwd",
         str(layout.workspace), "--", "echo $$; ls -A " + str(layout.home)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2"]  # pid 2 in its own namespace; the home looks empty


@needs_bwrap
def test_run_hides_a_home_that_does_not_exist_yet(layout: Layout) -> None:
    """pi starts an MCP server through ``sandbox run`` and the guard's sidecar at once: the home
    the sidecar is about to create (and its signing key) must be hidden all the same. Here the
    key appears, from outside, while the sandboxed command runs."""
    home = layout.workspace / "guard-home"  # inside the writable, visible workspace
    script = Path(sys.executable).with_name("pi-guard")
    reader = f"sleep 1; cat {home}/signing.key; echo EXIT=$?"
    running = subprocess.Popen(
        [str(script), "--home", str(home), "sandbox", "run", "--cwd", str(layout.workspace),
         "--", reader],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    for _ in range(200):
        if home.is_dir():
            break
        time.sleep(0.01)
    assert oct(home.stat().st_mode & 0o777) == "0o700"
    (home / "signing.key").write_text(SECRET)
    out, err = running.communicate(timeout=60)
    assert SECRET not in out
    assert "EXIT=1" in out, out + err
