"""What the session says about itself and the home: the footer line (``health``), ``/guard``
(``status``), ``audit.verify``, and the read-only planners (``plan``).
"""

from __future__ import annotations

import os
from typing import Any

from guard._pi import newer_than_tested
from guard._policy import PI_TOOLS
from guard._sidecar.runtime import fill_runtime_facts
from guard._sidecar.session.desk import Desk
from guard._sidecar.session.home import Export, Home
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.text import (
    runtime_note,
    sandbox_line,
    session_counts_line,
    status_audit_damaged,
    status_home_unusable,
    status_on,
    tools_lines,
)
from guard._sidecar.wire import PlanParams, StatusParams, VerifyParams

__all__ = ["Status"]


class Status:
    """The session's reports (see the module); it reads the other parts, never changes them."""

    def __init__(self, home: Home, sandbox: SessionSandbox, desk: Desk, export: Export) -> None:
        self.home = home
        self.sandbox = sandbox
        self.desk = desk
        self.export = export

    def line(self) -> str:
        """The footer text for this sidecar: on, or why the home or its log is unusable."""
        home, plan, params = self.home, self.sandbox.plan, self.sandbox.params
        if home.damage is not None:
            return status_audit_damaged(home.damage.kind)
        if home.open_problem is not None:
            return status_home_unusable(*home.open_problem)
        page = self.desk.page.url if self.desk.page is not None else None
        pi = params.pi_version if params is not None else None
        untested = pi if newer_than_tested(pi) else None
        return status_on(
            os.getpid(),
            plan.state if plan else None,
            page,
            untested,
            problems=len(self.policy_problems()),
        )

    def policy_problems(self) -> tuple[str, ...]:
        """What is wrong in the policy files of this session's workspace."""
        plan = self.sandbox.plan
        return self.home.policy_problems(plan.cwd if plan is not None else os.getcwd())

    def report(self, p: StatusParams, requests: int) -> dict[str, Any]:
        """``/guard``: the home, the log, the sandbox, this session's counts and tools."""
        guard = self.home.need_guard()
        for tool in p.tools:
            guard.classifier.learn(tool)
        plan = self.sandbox.plan
        cwd = plan.cwd if plan is not None else os.getcwd()
        judged = [
            (t, guard.classifier.classify(t.name, {}, cwd)[0])
            for t in p.tools
            if t.name not in PI_TOOLS
        ]
        status = dict(guard.status())
        verify = guard.verify_audit()
        intact = verify.decision == "intact"
        status["sidecar"] = {"pid": os.getpid(), "requests": requests}
        status["auditIntact"] = intact
        telemetry = self.export.status()
        status["telemetry"] = telemetry.model_dump(mode="json")
        page = self.desk.page
        status["text"] = "\n".join(
            [
                "operator-guard status",
                f"  key:          {status.get('keyId')}",
                f"  home:         {status.get('home')}",
                f"  audit log:    {status.get('auditLog')}",
                f"  consumed ids: {status.get('consumedIds')}",
                f"  audit verify: {'intact' if intact else 'NOT INTACT'}",
                f"  sidecar pid:  {os.getpid()} ({requests} requests)",
                f"  sandbox:      {sandbox_line(plan)}",
                f"  this session: {session_counts_line(guard.session, guard.session_counts)}",
                f"  telemetry:    {telemetry.line()}",
                *_problem_lines(self.policy_problems()),
                *_page_lines(page.login_url if page is not None else None),
                *tools_lines(judged, len(p.tools)),
            ]
        )
        status["sessionCounts"] = dict(guard.session_counts)
        status["policyProblems"] = list(self.policy_problems())
        return status

    def plan(self, p: PlanParams) -> dict[str, Any]:
        """Run a planner; with ``runtime`` (the pi tool), fill in what the runtime knows."""
        params = p.params
        filled: dict[str, bool] = {}
        if p.runtime is not None:
            params, filled = fill_runtime_facts(p.planner, params, p.runtime)
        plan = self.home.need_guard().plan(p.planner, params)
        dumped: dict[str, Any] = plan.model_dump(mode="json")
        if p.runtime is not None:
            dumped["runtime"] = {
                "facts": p.runtime.model_dump(mode="json"),
                "filled": filled,
                "note": runtime_note(p.runtime.has_ui),
            }
        return dumped

    def verify(self, p: VerifyParams) -> dict[str, Any]:
        """Verify the home's audit log (the guard's, or the monitor's keys verify-only)."""
        home = self.home
        if home.guard is not None:
            result = home.guard.verify_audit(allow_unanchored=p.allow_unanchored)
        elif home.monitor is not None:
            from audit.verify import verify_log
            from guard._home import AUDIT_LOG_FILE

            result = verify_log(
                home.path / AUDIT_LOG_FILE,
                home.monitor.keyring.public_keys(),
                allow_unanchored=p.allow_unanchored,
            )
        else:
            home.need_guard()
            raise AssertionError("unreachable")
        dumped: dict[str, Any] = result.model_dump(mode="json")
        return dumped


def _page_lines(login: str | None) -> list[str]:
    """``/guard``'s approval page line, when this session serves the page."""
    return [f"  approvals:    {login} (one-time login)"] if login is not None else []


def _problem_lines(problems: tuple[str, ...]) -> list[str]:
    """``/guard``'s policy lines: ok, or each problem (the guard runs stricter meanwhile)."""
    if not problems:
        return ["  policy:       ok"]
    plural = "s" if len(problems) != 1 else ""
    head = f"  policy:       {len(problems)} problem{plural} (the guard runs stricter meanwhile)"
    more = [f"    (and {len(problems) - 5} more)"] if len(problems) > 5 else []
    return [head, *(f"    {p}" for p in problems[:5]), *more]
