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


_SHARES_WITH = frozenset({"bash", "request", "monkeypatch", "_untouched", "_structlog_restored"})
"""What a test may take and still share the untouched world: this fixture, its own needs and
the suite's autouse fixtures (one added elsewhere only ends the sharing)."""


@pytest.fixture(scope="session")
def _untouched(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, list[Policy]]:
    """One world no test writes to, and its default policy once loaded (see :func:`bash`)."""
    base = tmp_path_factory.mktemp("untouched")
    (base / "home").mkdir()
    (base / "project").mkdir()
    home = base / "home"
    guard_home = home / ".pi" / "agent" / "operator-guard"
    return World(home=home, guard_home=guard_home, project=base / "project"), []


@pytest.fixture
def bash(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], Verdict]:
    """Classify a bash command in the default policy of a fresh world.

    A test that takes nothing else but its own parameters cannot change the world or what
    the policy reads: it shares one untouched world and its policy, loaded once per process,
    and the classifier sees the same ``HOME``. Thousands of table rows would otherwise each
    load a policy. Any other fixture (the ``world``, ``tmp_path``, one that sets the
    environment) and the test gets a world and a policy of its own.
    """
    callspec = getattr(request.node, "callspec", None)
    own = set(callspec.params) if callspec is not None else set()
    if set(request.fixturenames) - own - _SHARES_WITH:
        world: World = request.getfixturevalue("world")
        policy = world.policy()
    else:
        world, loaded = request.getfixturevalue("_untouched")
        monkeypatch.setenv("HOME", str(world.home))
        monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
        monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
        if not loaded:
            loaded.append(world.policy())
        policy = loaded[0]

    def run(command: str) -> Verdict:
        return policy.classify("bash", {"command": command}, world.project)

    return run
