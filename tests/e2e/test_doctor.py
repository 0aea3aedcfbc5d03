"""``pi-guard doctor`` and ``audit report --sessions`` against the real pi.

Correct on whichever pi the fixture gives: pi >= 0.79 gates a project's extensions behind
project trust, so a project-only install in an untrusted folder does not load (doctor exits
8, the run is ``guard-absent``); the legacy pi has no project trust, so there doctor says
trust does not apply, and the guard is made absent by uninstalling it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from guard._pi.install import install
from guard._pi.probe import parse_version
from guard._pi.trust import TRUST_INTRODUCED

from .pi_world import World, confirms, tool_ends

pytestmark = [pytest.mark.every_pi, pytest.mark.e2e]


def has_project_trust(world: World) -> bool:
    version = parse_version(world.pi.version)
    assert version is not None, world.pi
    return version >= TRUST_INTRODUCED


def project_only(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard installed for the project alone; no personal copy; no trust decision."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(world.agent_dir))
    world.install("global", uninstall=True)
    world.install("project")
    (world.agent_dir / "trust.json").unlink(missing_ok=True)


def doctor(world: World) -> tuple[int, dict[str, Any]]:
    """``pi-guard doctor`` for the world's project and pi, with pi's node on PATH."""
    argv = [sys.executable, "-m", "guard", "doctor", str(world.project), "--json"]
    done = subprocess.run(
        [*argv, "--pi", str(world.pi.cli)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=world.env(),
    )
    assert done.returncode in (0, 8), done.stderr
    return done.returncode, json.loads(done.stdout)


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [c for c in report["checks"] if c["name"] == name]
    return found


def test_doctor_reports_a_project_install_in_an_untrusted_folder(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_only(world, monkeypatch)
    code, report = doctor(world)
    trust = check(report, "trust")
    if has_project_trust(world):
        assert code == 8
        assert report["decision"] == "not-ready"
        assert trust["status"] == "fail"
        assert trust["reason"] == "trust-not-decided"
        assert check(report, "installs")["reason"] == "none-loads"
        assert report["loading"] == []
    else:
        assert trust["status"] == "n/a"
        assert trust["reason"] == "pi-has-no-project-trust"
        assert check(report, "installs")["reason"] == "one-install"
    assert check(report, "python")["status"] == "ok"


def test_a_run_without_the_guard_is_a_guard_absent_gap(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_only(world, monkeypatch)
    trusting = has_project_trust(world)
    if not trusting:
        # No project trust in this pi: the only way it runs without the guard is without it.
        world.install("project", uninstall=True)
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", lambda _request: True)
    assert confirms(events) == []  # nobody was asked
    (unguarded,) = tool_ends(events)
    assert not (world.project / "build").exists()

    # The same folder with the guard loaded: asked, confirmed, recorded.
    if trusting:
        guarded_run = world.rpc("--approve")
    else:
        world.install("project")
        guarded_run = world.rpc()
    with guarded_run as pi:
        events = pi.prompt("scenario:rm-a", lambda _request: True)
    assert len(confirms(events)) == 1
    (guarded,) = tool_ends(events)

    done = world.cli("audit", "report", "--sessions", str(world.sessions), "--json")
    assert done.returncode == 5, done.stderr
    report = json.loads(done.stdout)
    by_call = {row["toolCallId"]: row for row in report["rows"]}
    absent = by_call[unguarded["toolCallId"]]
    assert absent["classification"] == "audit-gap"
    assert absent["reason"] == "guard-absent"
    assert absent["seq"] is None
    assert absent["source"].endswith(".jsonl:" + absent["source"].rsplit(":", 1)[1])
    assert by_call[guarded["toolCallId"]]["classification"] == "auditable"
    assert report["summary"]["gapsByReason"]["guard-absent"] == 1
    (searched,) = report["external"]
    assert searched["executions"] == 2
    assert searched["gaps"] == 1


def test_the_pi_package_installed_with_pi_install_guards_and_doctor_agrees(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(world.agent_dir))
    world.install("project", uninstall=True)
    world.install("global", uninstall=True)
    package = world.tmp / "operator-guard-package"
    install("package", package, force=False, uninstall=False, home=world.home)
    added = subprocess.run(
        world.pi.command("install", str(package)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=world.env(),
    )
    assert added.returncode == 0, added.stdout + added.stderr

    _code, report = doctor(world)
    assert check(report, "installs")["reason"] == "one-install"
    assert [i["kind"] for i in report["loading"]] == ["package"]
    assert check(report, "trust")["status"] == "n/a"

    with world.rpc() as pi:  # no --approve: a personal package loads in any folder
        events = pi.prompt("scenario:rm-build", lambda _request: True)
    assert len(confirms(events)) == 1
    (end,) = tool_ends(events)
    assert end["isError"] is False
    assert len(world.envelopes()) == 1
