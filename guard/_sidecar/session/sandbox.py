"""The session's OS sandbox: its plan for the workspace (what the shim's bash spawn hook
applies), the ``sandbox.plan`` params it was made from, the stamp of the workspace's git
files it depends on (planned again when they change), and the allowlist proxy of its network.
"""

from __future__ import annotations

import os
from pathlib import Path

from guard._home import SESSION_TMP_DIR
from guard._logging import get_logger
from guard._policy import SandboxSettings, note_pi_runtime
from guard._sandbox import SandboxPlan, effective_settings, workspace_stamp
from guard._sandbox import plan as sandbox_plan
from guard._sidecar.network import SessionNetwork
from guard._sidecar.session.home import Home
from guard._sidecar.text import sandbox_block_reason
from guard._sidecar.wire import SandboxPlanParams, SandboxPlanReply

__all__ = ["SessionSandbox"]

_log = get_logger("guard.sidecar")


class SessionSandbox:
    """The plan, what it was planned from, and its network (see the module)."""

    def __init__(self, home: Home, session_dir: Path, layers: Path) -> None:
        self.home = home
        self.session_dir = session_dir
        self.layers = layers
        self.plan: SandboxPlan | None = None
        self.params: SandboxPlanParams | None = None
        self.stamp: tuple[tuple[str, bool, bool], ...] = ()
        self.network = SessionNetwork()

    def workspace(self, cwd: str) -> str:
        """The session's workspace (its sandbox's), else the call's directory."""
        return self.plan.cwd if self.plan is not None else cwd

    def waits_headless(self, cwd: str) -> bool:
        """Whether the user's policy keeps a call of a session without a UI waiting for an
        answer from another screen (``[approvals] headless = "wait"``)."""
        policy = self.home.need_guard().classifier.policy_for(self.workspace(cwd))
        return policy.approvals.headless == "wait"

    def planned(self, p: SandboxPlanParams) -> tuple[SandboxPlan, SandboxSettings]:
        """Plan the session's sandbox and remember what it depends on in the workspace; the
        user's ``[sandbox]`` settings it was planned with (the policy files read once)."""
        note_pi_runtime(p.pi_dir, p.node_path)
        home = self.home.path
        settings, settings_from, _ = effective_settings(home, Path(os.path.realpath(p.cwd)))
        opened = self.home.guard is not None
        session = sandbox_plan(
            p.cwd,
            home,
            settings=settings,
            settings_from=settings_from,
            shell=p.shell,
            extra_read_only=tuple(p.extra_read_only),
            env_names=tuple(p.env_names),
            layers=str(self.layers) if opened else None,
            session_tmp=str(self.session_dir / SESSION_TMP_DIR) if opened else None,
            proxy_socket=self.network.socket_path(),
        )
        self.audit_network()
        self.network.update(session)
        self.plan = session
        self.params = p
        self.stamp = workspace_stamp(session.cwd)
        return session, settings

    def reply(self, session: SandboxPlan, notice: str | None) -> SandboxPlanReply:
        """``sandbox.plan``'s reply (and a re-plan's, carried by ``evaluate``)."""
        return SandboxPlanReply(
            **session.model_dump(),
            notice=notice,
            notice_level="error" if session.state == "unavailable" else "warning",
            block_reason=sandbox_block_reason(session),
            audited=self.home.guard is not None,
        )

    def replanned(self) -> SandboxPlanReply | None:
        """A new plan when the workspace's git files changed since the last one (the agent
        created or re-pointed a repository); ``None`` when the plan still holds."""
        params = self.params
        if params is None or self.plan is None or self.plan.state != "sandboxed":
            return None
        if workspace_stamp(self.plan.cwd) == self.stamp:
            return None
        session, _ = self.planned(params)
        _log.info("sandbox-replanned", cwd=session.cwd, state=session.state)
        return self.reply(session, None)

    def audit_network(self) -> list[tuple[str, int]]:
        """Audit what the allowlist proxy refused since the last call (it runs on a thread
        of its own; the log is appended on this one); the (host, port) refused."""
        taken, new = self.network.refusals()
        guard = self.home.writable
        if guard is None or self.plan is None:
            return []  # nothing is appended to a log that does not verify
        for refused in new:
            guard.sessions.network_refused(
                refused.host, refused.port, refused.reason, self.plan.cwd
            )
        return [(r.host, r.port) for r in taken]

    def close(self) -> None:
        """Audit the proxy's last refusals and stop it."""
        self.audit_network()
        self.network.close()
