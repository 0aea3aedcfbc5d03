"""Try the guard in pi's own terminal UI, offline: ``.venv/bin/python -m tools.pi.tui``.

The same project, scripted model and install as ``make demo`` (:mod:`tools.pi.demo`), but pi
runs in its interactive TUI on this terminal and you answer the guard's dialogs yourself.
The first prompt is given on pi's command line (``scenario:demo tidy up the project``): the
scripted model reads a README, then asks to ``rm -rf build``, overwrite ``.env`` and delete
notes, one call at a time. Quit pi with Ctrl+C twice (or ``/quit``); everything lives in a
temporary directory that is removed afterwards. Repo-only tooling, never in the wheel.

Exit code: pi's own, 2 when pi cannot be set up, 7 when the sandbox cannot start here.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from guard._home import ENV_PREFIX, WARM_IDLE_ENV
from tools.pi.demo import DEMO_SCENARIO, DEMO_TURNS, sandbox_ready
from tools.pi.harness import (
    NEWEST,
    PiSetupError,
    ensure_pi,
    find_repo_root,
    install_guard,
    offline_env,
    write_agent_dir,
)
from tools.pi.scripted_model import MODEL_ID, PROVIDER, ScriptedModelServer

__all__ = ["FIRST_PROMPT", "main", "project_files"]

FIRST_PROMPT = f"scenario:{DEMO_SCENARIO} tidy up the project"


def project_files(project: Path) -> None:
    """The demo's project: a build folder, a README, a .env, drafts."""
    (project / "build").mkdir(parents=True)
    (project / "build" / "app.bin").write_bytes(b"\0" * 64)
    (project / "README.md").write_text("# demo project\n")
    (project / ".env").write_text("API_TOKEN=original\n")
    for name in ("notes-1.txt", "notes-2.txt", "notes-3.txt", "notes.log"):
        (project / name).write_text("draft\n")


def main() -> int:
    why = sandbox_ready()
    if why is not None:
        sys.stderr.write(f"tui: the sandbox the agent's commands run in cannot start: {why}\n")
        return 7
    try:
        pi = ensure_pi(find_repo_root(), NEWEST, log=sys.stderr)
    except PiSetupError as exc:
        sys.stderr.write(f"tui: {exc}\n")
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="pi-guard-tui-") as tmp,
        ScriptedModelServer({DEMO_SCENARIO: DEMO_TURNS}) as server,
    ):
        base = Path(tmp)
        project = base / "project"
        project_files(project)
        agent_dir = write_agent_dir(base / "agent", server.base_url)
        install_guard("global", project, agent_dir, home=agent_dir / "operator-guard")
        args = pi.command("--provider", PROVIDER, "--model", MODEL_ID, "--no-session")
        # One session in a home removed at its end: no fork server waiting for a next one.
        env = pi.env(offline_env(agent_dir, {ENV_PREFIX + WARM_IDLE_ENV: "0"}))
        try:
            return subprocess.call([*args, FIRST_PROMPT], cwd=project, env=env)
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
