from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from guard._grants import Coverage, GrantOffer, GrantPattern, covers, offers
from guard._policy import Policy, Verdict

# mv, cp and chmod ask too (the project layer may only add restrictions), so that the
# property test has four programs whose plain calls are asked.
PROJECT_RULES = """
version = 1
[[rule]]
id = "project.files"
verdict = "confirm"
kind = "destructive"
reason = "moves, copies or changes files"
program = ["mv", "cp", "chmod"]
"""


@dataclass
class World:
    """A temporary user home, its guard home, a workspace (``app``) and a place outside it."""

    home: Path
    guard_home: Path
    workspace: Path
    outside: Path
    policy: Policy

    def verdict(self, tool: str, tool_input: dict[str, Any], cwd: Path | None = None) -> Verdict:
        return self.policy.classify(tool, tool_input, cwd or self.workspace)

    def offers(
        self,
        tool: str,
        tool_input: dict[str, Any],
        cwd: Path | None = None,
        *,
        workspace: Path | None = None,
    ) -> tuple[GrantOffer, ...]:
        where = cwd or self.workspace
        verdict = self.verdict(tool, tool_input, where)
        return offers(tool, tool_input, where, verdict, workspace=workspace or self.workspace)

    def bash_offers(self, command: str, cwd: Path | None = None) -> tuple[GrantOffer, ...]:
        return self.offers("bash", {"command": command}, cwd)

    def covers(
        self, pattern: GrantPattern, tool: str, tool_input: dict[str, Any], cwd: Path | None = None
    ) -> Coverage:
        where = cwd or self.workspace
        return covers(pattern, tool, tool_input, where, self.verdict(tool, tool_input, where))

    def bash_covers(self, pattern: GrantPattern, command: str, cwd: Path | None = None) -> Coverage:
        return self.covers(pattern, "bash", {"command": command}, cwd)

    def pattern(self, command: str, breadth: str) -> GrantPattern:
        (found,) = [o for o in self.bash_offers(command) if o.breadth == breadth]
        return found.pattern


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    root = tmp_path.resolve()
    home = root / "home"
    workspace = home / "src" / "app"
    outside = root / "elsewhere"
    for directory in (workspace / "sub", workspace / "other", outside):
        directory.mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.md", "sub/a.txt", "other/x.txt", ".env.example"):
        (workspace / name).write_text("x", encoding="utf-8")
    (outside / "x.txt").write_text("x", encoding="utf-8")
    (workspace / ".pi").mkdir()
    (workspace / ".pi" / "operator-guard.toml").write_text(PROJECT_RULES, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
    guard_home = home / ".pi" / "agent" / "operator-guard"
    policy = Policy.load(guard_home, workspace)
    assert not policy.problems
    return World(home, guard_home, workspace, outside, policy)
