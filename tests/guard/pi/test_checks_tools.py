"""``pi-guard doctor`` on the tools pi reaches beyond its own: the MCP servers it would start
and how their calls are judged, and a pi newer than the guard is tested with (also in the
footer)."""

from __future__ import annotations

import json
from pathlib import Path

from guard._pi.checks import check_mcp, check_pi
from guard._pi.probe import NEWEST_TESTED, PiFound, newer_than_tested
from guard._sidecar.text import status_on

REPO = Path(__file__).resolve().parents[3]


def servers(path: Path, entries: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": entries}))


def test_the_newest_tested_pi_is_the_pinned_current_one() -> None:
    pinned = json.loads((REPO / "tools/pi/current/package.json").read_text())["dependencies"]
    assert pinned["@earendil-works/pi-coding-agent"] == ".".join(map(str, NEWEST_TESTED))


def test_a_pi_newer_than_tested_is_a_warning_in_doctor_and_the_footer() -> None:
    def pi(version: str) -> PiFound:
        return PiFound(
            path="/x/pi", package="p", version=version, node_requirement=None, project_trust=True
        )

    assert check_pi([pi("1.6.0")]).status == "ok"
    newer = check_pi([pi("1.6.0"), pi("1.7.2")])
    assert (newer.status, newer.reason) == ("warn", "pi-newer-than-tested")
    assert "ask at every call" in newer.detail
    assert not newer_than_tested(None) and not newer_than_tested("0.73.1")
    assert "pi 2.0.0 untested" in status_on(7, "sandboxed", None, "2.0.0")
    assert "untested" not in status_on(7, "sandboxed")


def test_doctor_lists_mcp_servers_and_how_their_calls_are_judged(tmp_path: Path) -> None:
    home, agent, project = tmp_path / "home", tmp_path / "agent", tmp_path / "project"
    project.mkdir()
    assert check_mcp(project, home, agent).reason == "no-mcp-servers"
    servers(agent / "mcp.json", {"docs": {"command": "d"}, "ops": {"url": "http://x"}})
    home.mkdir()
    (home / "operator-guard.toml").write_text('[mcp]\ntrust_hints = ["docs"]\n')
    mine = check_mcp(project, home, agent)
    assert mine.status == "ok"
    assert "docs (your mcp.json): hints trusted" in mine.detail
    assert "ops (your mcp.json): every call asks" in mine.detail
    servers(project / ".pi" / "mcp.json", {"evil": {"command": "sh"}})
    theirs = check_mcp(project, home, agent)
    assert (theirs.status, theirs.reason) == ("warn", "project-mcp-servers")
    assert "evil (the project's .pi/mcp.json): every call asks" in theirs.detail
    (project / ".pi" / "mcp.json").write_text("{broken")
    broken = check_mcp(project, home, agent)
    assert "could not be read" in broken.detail and broken.status == "warn"
    assert "docs (your mcp.json): every call asks" in broken.detail  # no hints count now
