from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from guard._policy import Policy, Verdict


@dataclass
class World:
    """A temporary user home, its guard home and a project directory."""

    home: Path
    guard_home: Path
    project: Path

    def user_config(self, text: str) -> Path:
        self.guard_home.mkdir(parents=True, exist_ok=True)
        path = self.guard_home / "operator-guard.toml"
        path.write_text(text, encoding="utf-8")
        return path

    def project_config(self, text: str) -> Path:
        (self.project / ".pi").mkdir(exist_ok=True)
        path = self.project / ".pi" / "operator-guard.toml"
        path.write_text(text, encoding="utf-8")
        return path

    def policy(self) -> Policy:
        return Policy.load(self.guard_home, self.project)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
    return World(home=home, guard_home=home / ".pi" / "agent" / "operator-guard", project=project)


@pytest.fixture
def bash(world: World) -> Callable[[str], Verdict]:
    policy = world.policy()

    def run(command: str) -> Verdict:
        return policy.classify("bash", {"command": command}, world.project)

    return run
