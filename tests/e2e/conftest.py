"""Fixtures for the end-to-end tests: the pinned pi, the scripted model, a fresh world.

``world`` depends on ``pinned_pi`` (tests/conftest.py), which is parametrized over the pinned
pi versions (ids ``legacy-0.73.1``, ``current-1.6.0``). Every end-to-end test runs on the
newest; a test marked ``every_pi`` (pi's side of the contract: its events, dialogs and keys,
tool inputs, install, start and exit) runs on each, and one also marked
``variants_on_newest_pi`` runs only the first of its own parameters on the older one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.pi.harness import PinnedPi, write_agent_dir
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import SCENARIOS, World

SSH_KEY_TEXT = "-----BEGIN OPENSSH PRIVATE KEY-----\nE2E-SSH-KEY-MATERIAL-2c9d\n"


@pytest.fixture(scope="session")
def sidecar_command(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command the installed shim runs; fail early and clearly if it does not serve."""
    command = [sys.executable, "-I", "-m", "guard", "serve"]
    done = subprocess.run(
        command,
        input=b'{"jsonrpc":"2.0","id":1,"method":"health"}\n',
        capture_output=True,
        env={**os.environ, "PI_OPERATOR_GUARD_HOME": str(tmp_path_factory.mktemp("probe"))},
        timeout=60,
        check=False,
    )
    first = done.stdout.split(b"\n", 1)[0]
    assert first.startswith(b'{"jsonrpc":"2.0","id":1,"result"'), (
        f"`python -m guard serve` does not answer JSON-RPC: {done.stderr.decode()[-300:]}"
    )
    return command


@pytest.fixture(scope="session")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(SCENARIOS) as server:
        yield server


@pytest.fixture
def world(
    tmp_path: Path,
    pinned_pi: PinnedPi,
    model_server: ScriptedModelServer,
    sidecar_command: list[str],
) -> World:
    """A fresh project with the guard installed globally (personal install in the world's
    agent dir), so it loads on every pi version without ``--approve``; a test that wants a
    project install calls ``world.install("project")`` (and ``world.install("global",
    uninstall=True)`` to have only that one)."""
    return make_world(tmp_path, pinned_pi, model_server)


def make_world(tmp_path: Path, pinned_pi: PinnedPi, model_server: ScriptedModelServer) -> World:
    """The :func:`world` fixture's world, for one given pi (a test of what only the current
    pi has, MCP and codemode, builds its world on that one)."""
    project = tmp_path / "project"
    for name in ("build", "dist", "a", "b", "c"):
        (project / name).mkdir(parents=True)
        (project / name / "keep.txt").write_text(name)
    (project / "README.md").write_text("# e2e project\n")
    (project / ".env").write_text("TOKEN=original\n")
    agent_dir = write_agent_dir(tmp_path / "agent", model_server.base_url)
    # The operator's own home, so no test reads or risks the machine's (pi, the sidecar and
    # the sandbox all take HOME from here).
    user_home = tmp_path / "user"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_ed25519").write_text(SSH_KEY_TEXT)
    (user_home / ".bashrc").write_text("# the operator's bashrc\n")
    (user_home / ".gitconfig").write_text("[user]\n\tname = E2E Operator\n\temail = op@e2e\n")
    world = World(
        tmp=tmp_path,
        project=project,
        agent_dir=agent_dir,
        home=agent_dir / "operator-guard",
        sessions=tmp_path / "sessions",
        pi=pinned_pi,
        user_home=user_home,
    )
    world.install()
    return world
