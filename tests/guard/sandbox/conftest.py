"""A fake guard home, pi agent dir and workspace, and a helper that runs a command the way
the agent's bash is run: ``/bin/bash -c <wrapped>`` with real bubblewrap, real processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from guard._policy.settings.models import SandboxSettings
from guard._sandbox import SandboxPlan, SpawnContext, plan, spawn

SECRET = "SIGNING-KEY-MATERIAL-7f3a9c"
AUTH_SECRET = "sk-ant-api-KEY-4e1d"
BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"

# Fails (never skips) where bubblewrap cannot start: it is a requirement.
needs_bwrap = pytest.mark.usefixtures("bwrap_required")


@dataclass
class Layout:
    """A world to attack: everything lives under one temporary directory."""

    root: Path
    home: Path
    agent: Path
    workspace: Path
    settings: SandboxSettings = field(default_factory=SandboxSettings)
    extra_read_only: tuple[str, ...] = ()

    @property
    def key(self) -> Path:
        return self.home / "signing.key"

    def plan(self, **overrides: object) -> SandboxPlan:
        kwargs: dict[str, object] = {
            "settings": self.settings,
            "settings_from": "user",
            "agent_dir": self.agent,
            "extra_read_only": self.extra_read_only,
        }
        kwargs.update(overrides)
        return plan(self.workspace, self.home, **kwargs)  # type: ignore[arg-type]

    def run(
        self,
        command: str,
        *,
        session: SandboxPlan | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``command`` exactly as pi's bash tool would after our spawn hook."""
        session = session or self.plan()
        context = spawn(
            session,
            SpawnContext(command=command, cwd=str(self.workspace), env=dict(env or os.environ)),
        )
        return subprocess.run(
            ["/bin/bash", "-c", context.command],
            cwd=context.cwd,
            env=context.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )


HOST_PID_NS = os.readlink("/proc/self/ns/pid")
RAN = "SANDBOXED-COMMAND-RAN"


def run_proved(layout: Layout, command: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``layout.run(command)`` after proving the command starts inside the sandbox: it first
    prints a marker with its PID namespace, which must be there and not the host's. An
    attack test that asserts a secret is absent passes for nothing if the command never ran.
    """
    proof = f"printf '{RAN} %s\\n' \"$(readlink /proc/self/ns/pid)\"; "
    result = layout.run(proof + command, **kwargs)  # type: ignore[arg-type]
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith(RAN)]
    assert lines, (command, result)
    namespace = lines[0].split(" ", 1)[1]
    assert namespace.startswith("pid:[") and namespace != HOST_PID_NS, (command, lines)
    return result


def make_layout(root: Path, *, home: Path | None = None) -> Layout:
    home = home or root / "guard-home"
    agent = root / "agent"
    workspace = root / "workspace"
    for directory in (home, agent, workspace):
        directory.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    (home / "signing.key").write_text(SECRET + "\n")
    (home / "signing.key").chmod(0o600)
    (home / "keyring.json").write_text('{"keys": {}}\n')
    (home / "operator-guard.toml").write_text("version = 1\n")
    (agent / "auth.json").write_text(f'{{"anthropic": "{AUTH_SECRET}"}}\n')
    (agent / "settings.json").write_text("{}\n")
    for ext in (
        agent / "extensions" / "operator-guard",
        workspace / ".pi" / "extensions" / "operator-guard",
    ):
        ext.mkdir(parents=True)
        (ext / "index.ts").write_text("// shim\n")
        (ext / "guard.json").write_text(f'{{"python": "{sys.executable}"}}\n')
    return Layout(root=root, home=home, agent=agent, workspace=workspace)


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return make_layout(tmp_path)
