"""``pi-guard doctor`` (the real CLI, in its own process) fails a log whose signed head was
deleted: a headless log cannot show that records were cut from its end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guard._pi.install import install
from tests.guard.pi.test_doctor import new_pi, node_bin, ready_home

pytestmark = pytest.mark.integration

__all__ = ["new_pi", "node_bin"]  # fixtures


def doctor(project: Path, pi: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "guard", "doctor", str(project), "--pi", str(pi), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_doctor_fails_a_headless_log(project: Path, new_pi: Path, agent_dir: Path) -> None:
    install("global", None, force=False, uninstall=False)
    home = ready_home(agent_dir)
    assert doctor(project, new_pi).returncode == 0  # the control: the same home, head kept
    (home / "audit.jsonl.head").unlink()

    done = doctor(project, new_pi)
    assert done.returncode == 8, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "audit-unanchored" in x]
    assert "fail" in line.lower() and "head-missing" in line, done.stdout

    as_json = doctor(project, new_pi, "--json")
    assert as_json.returncode == 8
    (audit,) = [c for c in json.loads(as_json.stdout)["checks"] if c["name"] == "audit"]
    assert (audit["status"], audit["reason"]) == ("fail", "audit-unanchored")
    assert "head-missing" in audit["detail"]
    assert not (home / "audit.jsonl.head").exists(), "doctor writes nothing"
