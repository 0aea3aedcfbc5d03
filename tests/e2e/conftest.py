"""Fixtures for the end-to-end tests: the pinned pi, the scripted model, a fresh world."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guard._pi_demo import ensure_pi, write_agent_dir
from guard._scripted_model import ScriptedModelServer

from .pi_world import REPO, SCENARIOS, World


@pytest.fixture(scope="session")
def pi_bin() -> Path:
    """The pinned pi, installed into the ignored .cache/pi on first use (file-locked)."""
    return ensure_pi(REPO)


@pytest.fixture(scope="session")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(SCENARIOS) as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, pi_bin: Path, model_server: ScriptedModelServer) -> World:
    project = tmp_path / "project"
    for name in ("build", "dist", "a", "b", "c"):
        (project / name).mkdir(parents=True)
        (project / name / "keep.txt").write_text(name)
    (project / "README.md").write_text("# e2e project\n")
    (project / ".env").write_text("TOKEN=original\n")
    agent_dir = write_agent_dir(tmp_path / "agent", model_server.base_url)
    world = World(
        tmp=tmp_path,
        project=project,
        agent_dir=agent_dir,
        home=agent_dir / "operator-guard",
        sessions=tmp_path / "sessions",
        pi=pi_bin,
    )
    world.install()
    return world
