"""The session's OS sandbox on the sidecar (``sandbox.plan``): planned for the workspace,
audited as ``session.started``, planned again when the workspace's git files change.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

from guard._effects import Baseline
from guard._home import SESSION_TMP_DIR
from guard._logging import get_logger
from guard._policy import SandboxSettings, ToolFacts, note_pi_runtime
from guard._sandbox import SandboxPlan, effective_settings, workspace_stamp
from guard._sandbox import plan as sandbox_plan
from guard._sidecar.escape import command_line
from guard._sidecar.handlers.desk import DeskPart
from guard._sidecar.text import sandbox_block_reason, sandbox_notice
from guard._sidecar.wire import SandboxPlanParams, SandboxPlanReply

__all__ = ["SandboxPart"]

_log = get_logger("guard.sidecar")


class SandboxPart(DeskPart):
    """``sandbox.plan`` and the re-plan an ``evaluate`` of a bash call may bring."""

    def _sandbox_plan(self, p: SandboxPlanParams) -> dict[str, Any]:
        """The OS sandbox for the session in ``cwd``: what the shim's bash spawn hook applies.

        Audited as ``session.started`` (the log is the one record of each session's sandbox
        state); the footer (``health``) and ``/guard`` (``status``) show it from now on.
        Without a usable home nothing can be audited and every call is blocked anyway, so
        the plan comes back without a notice (the home's problem is the one to tell).
        """
        session, settings = self._plan_sandbox(p)
        if session.effects == "review":
            # The operator's baseline, taken as the session starts (before any agent command).
            self._retake_baseline(session.cwd)
            self._quiet = (settings.ask, tuple(settings.regenerable))
        self._start_page(session.cwd)
        if self._guard is not None and self._damage is None:
            attributed = self._guard.session
            if attributed is not None and p.session_id and attributed["id"] != p.session_id:
                self._guard.session_ended("switched")  # pi moved to another session
            self._guard.attribute(p.session_id or f"sidecar-{os.getpid()}", p.session_file)
            for tool in p.tools:
                self._guard.classifier.learn(tool)
            self._guard.session_started(
                session.cwd,
                session.state,
                reason=session.reason,
                message=session.message,
                pi_version=p.pi_version,
                sidecar_restarted=p.sidecar_restarted,
                mode=p.mode,
                network=session.network,
                tools=[_tool_summary(t) for t in p.tools],
            )
        notice = sandbox_notice(session) if self._guard is not None else None
        _warm_redaction()
        return self._sandbox_reply(session, notice).model_dump(mode="json")

    def _retake_baseline(self, cwd: str) -> None:
        """What the operator has now (the session starts, or the operator answered), never
        forgetting the work an earlier baseline had."""
        now = Baseline.of(cwd)
        self._baseline = now if self._baseline is None else self._baseline.union(now)
        if self._guard is not None:
            # pi's write/edit of a file that held work then asks (the policy cache asks it).
            self._guard.classifier.overwrites = self._baseline.holds_work

    def _plan_sandbox(self, p: SandboxPlanParams) -> tuple[SandboxPlan, SandboxSettings]:
        """Plan the session's sandbox and remember what it depends on in the workspace; the
        user's ``[sandbox]`` settings it was planned with (the policy files read once)."""
        note_pi_runtime(p.pi_dir, p.node_path)
        settings, settings_from, _ = effective_settings(self.home, Path(os.path.realpath(p.cwd)))
        session = sandbox_plan(
            p.cwd,
            self.home,
            settings=settings,
            settings_from=settings_from,
            shell=p.shell,
            extra_read_only=tuple(p.extra_read_only),
            env_names=tuple(p.env_names),
            layers=str(self._layers) if self._guard is not None else None,
            session_tmp=str(self._session_dir / SESSION_TMP_DIR) if self._guard else None,
            proxy_socket=self._network.socket_path(),
        )
        self._audit_network()
        self._network.update(session)
        self._sandbox = session
        self._sandbox_params = p
        self._sandbox_stamp = workspace_stamp(session.cwd)
        return session, settings

    def _sandbox_reply(self, session: SandboxPlan, notice: str | None) -> SandboxPlanReply:
        return SandboxPlanReply(
            **session.model_dump(),
            notice=notice,
            notice_level="error" if session.state == "unavailable" else "warning",
            block_reason=sandbox_block_reason(session),
            audited=self._guard is not None,
        )

    def _replanned(self) -> SandboxPlanReply | None:
        """A new plan when the workspace's git files changed since the last one (the agent
        created or re-pointed a repository); ``None`` when the plan still holds."""
        params = self._sandbox_params
        if params is None or self._sandbox is None or self._sandbox.state != "sandboxed":
            return None
        if workspace_stamp(self._sandbox.cwd) == self._sandbox_stamp:
            return None
        session, _ = self._plan_sandbox(params)
        _log.info("sandbox-replanned", cwd=session.cwd, state=session.state)
        return self._sandbox_reply(session, None)


@cache
def _warm_redaction() -> None:
    """The first call's preview needs the redaction rules (detect-secrets, ~60 ms to import):
    loaded once the session has started, while the model thinks, not when that call waits."""
    threading.Thread(target=command_line, args=("true",), name="warm", daemon=True).start()


def _tool_summary(tool: ToolFacts) -> dict[str, str]:
    out = {"name": tool.name, "source": tool.source}
    if tool.server is not None:
        out["server"] = tool.server
    return out
