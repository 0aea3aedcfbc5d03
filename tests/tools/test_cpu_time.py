"""``tools.cpu_time`` counts what ``time`` misses: a process that left its parent."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tools.cpu_time import CpuGroup

REPO = Path(__file__).resolve().parent.parent.parent

# The command spins 0.4 s itself and leaves a daemon (a double fork) that spins 0.8 s more
# after the command has ended.
_SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"
_SCRIPT = (
    "import os, sys\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.close(2)\n"
    f"        exec({_SPIN.format(s=0.8)!r})\n"
    "        os._exit(0)\n"
    "    os._exit(0)\n"
    "os.wait()\n"
    f"exec({_SPIN.format(s=0.4)!r})\n"
    "sys.exit(3)\n"
)


def _run(*args: str) -> tuple[int, float, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tools.cpu_time", *args],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    match = re.fullmatch(
        r"cpu: ([0-9.]+) s \((.+)\); wall: [0-9.]+ s; exit: (-?\d+)(; still running: \d+)?\n",
        done.stderr,
    )
    assert match is not None, done.stderr
    assert match.group(4) is None, done.stderr  # it waited for what the command left behind
    return done.returncode, float(match.group(1)), match.group(2)


def test_a_daemon_the_command_left_behind_is_counted() -> None:
    code, cpu, how = _run("--", sys.executable, "-c", _SCRIPT)
    assert code == 3  # the command's own exit code
    probe = CpuGroup.make(None)
    if probe is not None:
        probe.remove()
    if probe is None:  # no group can be made here: what wait4 reports
        assert how.startswith("children only")
        assert 0.35 < cpu < 0.8
    else:
        assert how.startswith("cgroup")
        assert cpu >= 1.15  # 0.4 s of the command and 0.8 s of the daemon it left


def test_no_command_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.cpu_time"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "no command given (python -m tools.cpu_time -- COMMAND ...)"
    )


def test_a_command_that_does_not_exist_exits_127() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.cpu_time", "--", str(REPO / "no-such-program")],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 127
    assert done.stderr.startswith("cpu_time: cannot run ")
    assert "Traceback" not in done.stderr
