"""The sandbox wing's check for ``pi-guard doctor``: will the agent's bash in a folder run
inside the sandbox, is it opted out, or is it blocked because the sandbox cannot start?"""

from __future__ import annotations

from pathlib import Path

from guard._checks import Check
from guard._errors import GuardError
from guard._home import POLICY_FILE
from guard._sandbox.plan import plan as sandbox_plan

__all__ = ["check_sandbox"]


def check_sandbox(directory: Path, home: Path, agent_dir: Path) -> Check:
    """Will the agent's bash in ``directory`` run inside the sandbox (or is it opted out)?"""
    try:
        planned = sandbox_plan(directory, home, agent_dir=agent_dir)
    except GuardError as exc:
        return Check(
            name="sandbox",
            subject=str(home),
            status="fail",
            reason="sandbox-config",
            detail=str(exc),
            fix="pi-guard policy check " + str(home / POLICY_FILE),
        )
    if planned.state == "sandboxed":
        return Check(
            name="sandbox",
            subject=str(home),
            status="ok",
            reason="sandboxed",
            detail=planned.message,
        )
    if planned.state == "unsandboxed":
        return Check(
            name="sandbox",
            subject=str(home),
            status="warn",
            reason="unsandboxed",
            detail=planned.message,
        )
    return Check(
        name="sandbox",
        subject=str(home),
        status="fail",
        reason=planned.reason or "sandbox-unavailable",
        detail=planned.message + " (the agent's bash is blocked)",
        fix="install bubblewrap (apt-get install bubblewrap), or opt out in the user policy: "
        '[sandbox] mode = "off"',
    )
