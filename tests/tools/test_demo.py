"""``make demo`` is the main job: it must run to the end against the real (newest) pi."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_the_real_pi_demo_runs_to_a_verified_log() -> None:
    # It once hung when the guard's dialog changed shape and the demo still answered the
    # old one; a timeout here turns that into a failure instead of a stuck `make demo`.
    done = subprocess.run(
        [sys.executable, "-m", "tools.pi.demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "operator │ yes" in done.stdout and "operator │ no" in done.stdout
    assert "build/ exists afterwards: False" in done.stdout
    assert ".env afterwards: API_TOKEN=original" in done.stdout
    assert "audit log intact: True" in done.stdout


def test_without_bubblewrap_the_demo_stops_before_pi_with_the_install_hint() -> None:
    """On a machine without bwrap (here: every place the guard looks for it masked, in a
    mount namespace of the test's own) the demo says what to install and fails before pi."""
    from guard._hermetic import system_program
    from guard._sandbox.collect import BWRAP_CANDIDATES

    masks = " && ".join(
        f"{{ [ ! -e {c} ] || mount --bind /dev/null {c}; }}" for c in BWRAP_CANDIDATES
    )
    done = subprocess.run(
        [system_program("unshare"), "--user", "--map-root-user", "--mount", "--", "/bin/sh",
         "-c", f'{masks} && exec "$0" -m tools.pi.demo', sys.executable],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 7, done.stdout[-1000:] + done.stderr[-1000:]
    assert "apt-get install bubblewrap" in done.stderr
    assert "pi ready" not in done.stdout  # pi never started
