"""tools/pi/harness.py: the pinned pi versions (tools/pi/<flavor>) install and run with a node
they accept."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tools.pi.harness import PinnedPi, PiSetupError, minimum_node, node_version


@pytest.mark.e2e
@pytest.mark.every_pi
def test_each_pinned_pi_runs_with_a_node_it_accepts(pinned_pi: PinnedPi) -> None:
    meta = json.loads((pinned_pi.package_dir / "package.json").read_text())
    assert (meta["name"], meta["version"]) == (pinned_pi.package, pinned_pi.version)
    have = node_version(pinned_pi.node)
    assert have is not None
    assert have >= minimum_node(meta["engines"]["node"])
    done = subprocess.run(
        pinned_pi.command("--version"),
        env=pinned_pi.env({"PATH": os.defpath, "PI_OFFLINE": "1"}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert pinned_pi.version in done.stdout + done.stderr  # the legacy pi prints it on stderr


def test_the_lockfiles_pin_exact_versions() -> None:
    tools = Path(__file__).resolve().parents[2] / "tools" / "pi"
    for name in ("legacy", "current", "node"):
        manifest = json.loads((tools / name / "package.json").read_text())
        lock = json.loads((tools / name / "package-lock.json").read_text())
        wanted = {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}
        for package, version in wanted.items():
            assert version[0].isdigit(), (name, package, version)
            assert lock["packages"][f"node_modules/{package}"]["version"] == version


@pytest.mark.parametrize(
    ("engines", "minimum"),
    [(">=22.19.0", (22, 19, 0)), (">= 20.6", (20, 6, 0)), (">=v18", (18, 0, 0))],
)
def test_the_node_pi_needs_is_read_from_engines(
    engines: str, minimum: tuple[int, int, int]
) -> None:
    assert minimum_node(engines) == minimum


def test_an_engines_range_it_cannot_read_is_an_error() -> None:
    with pytest.raises(PiSetupError, match=r"engines\.node"):
        minimum_node("^22.19.0 || >=24")
