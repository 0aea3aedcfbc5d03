"""What the sidecar says about itself and the home (``describe``, ``ping``, ``health``,
``status``, ``audit.verify``), and the read-only planners (``plan``).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from guard._errors import GuardError
from guard._pi import planner_tools
from guard._policy import PI_TOOLS
from guard._sidecar.framing import MAX_LINE_BYTES
from guard._sidecar.handlers.state import SidecarState
from guard._sidecar.runtime import fill_runtime_facts
from guard._sidecar.text import (
    runtime_note,
    sandbox_line,
    session_counts_line,
    tools_lines,
)
from guard._sidecar.wire import NoParams, PlanParams, StatusParams, VerifyParams

__all__ = ["PROTOCOL", "StatusPart"]

PROTOCOL = "pi-operator-guard/sidecar/v1"


class StatusPart(SidecarState):
    """``describe``, ``ping``, ``health``, ``status``, ``plan``, ``audit.verify``."""

    def _describe(self, _: NoParams) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            package_version = version("pi-operator-guard")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            package_version = "0"
        return {
            "name": "pi-operator-guard",
            "protocol": PROTOCOL,
            "version": package_version,
            "verifyOnly": self.verify_only,
            "maxLineBytes": MAX_LINE_BYTES,
            "methods": sorted(
                n for n, m in self.methods.items() if m.verify_only_ok or not self.verify_only
            ),
            "params": {n: m.params.model_json_schema() for n, m in sorted(self.methods.items())},
            "tools": [tool.model_dump(mode="json") for tool in planner_tools()],
        }

    def _ping(self, _: NoParams) -> dict[str, Any]:
        """A bare round trip: the baseline the benchmark compares the guard against."""
        return {"pong": True}

    def _health(self, _: NoParams) -> dict[str, Any]:
        key_id = None
        if self._guard is not None:
            with contextlib.suppress(GuardError):
                key_id = self._guard.key_id
        return {
            "ok": self._open_error is None and self._damage is None,
            "pid": os.getpid(),
            "uptimeSeconds": round(time.monotonic() - self.started, 3),
            "requests": self.requests,
            "verifyOnly": self.verify_only,
            "home": str(self.home),
            "keyId": key_id,
            "error": self._open_error,
            "statusText": self._status_line(),
        }

    def _status(self, p: StatusParams) -> dict[str, Any]:
        guard = self._need_guard()
        for tool in p.tools:
            guard.classifier.learn(tool)
        cwd = self._sandbox.cwd if self._sandbox is not None else os.getcwd()
        judged = [
            (t, guard.classifier.classify(t.name, {}, cwd)[0])
            for t in p.tools
            if t.name not in PI_TOOLS
        ]
        status = dict(guard.status())
        verify = guard.verify_audit()
        intact = verify.decision == "intact"
        status["sidecar"] = {"pid": os.getpid(), "requests": self.requests}
        status["auditIntact"] = intact
        telemetry = self._telemetry_status()
        status["telemetry"] = telemetry.model_dump(mode="json")
        status["text"] = "\n".join(
            [
                "operator-guard status",
                f"  key:          {status.get('keyId')}",
                f"  home:         {status.get('home')}",
                f"  audit log:    {status.get('auditLog')}",
                f"  consumed ids: {status.get('consumedIds')}",
                f"  audit verify: {'intact' if intact else 'NOT INTACT'}",
                f"  sidecar pid:  {os.getpid()} ({self.requests} requests)",
                f"  sandbox:      {sandbox_line(self._sandbox)}",
                f"  this session: {session_counts_line(guard.session, guard.session_counts)}",
                f"  telemetry:    {telemetry.line()}",
                *_problem_lines(self._policy_problems()),
                *(
                    [f"  approvals:    {self._page.login_url} (one-time login)"]
                    if self._page is not None
                    else []
                ),
                *tools_lines(judged, len(p.tools)),
            ]
        )
        status["sessionCounts"] = dict(guard.session_counts)
        status["policyProblems"] = list(self._policy_problems())
        return status

    def _plan(self, p: PlanParams) -> dict[str, Any]:
        """Run a planner; with ``runtime`` (the pi tool), fill in what the runtime knows."""
        params = p.params
        filled: dict[str, bool] = {}
        if p.runtime is not None:
            params, filled = fill_runtime_facts(p.planner, params, p.runtime)
        plan = self._need_guard().plan(p.planner, params)
        dumped: dict[str, Any] = plan.model_dump(mode="json")
        if p.runtime is not None:
            dumped["runtime"] = {
                "facts": p.runtime.model_dump(mode="json"),
                "filled": filled,
                "note": runtime_note(p.runtime.has_ui),
            }
        return dumped

    def _verify(self, p: VerifyParams) -> dict[str, Any]:
        if self._guard is not None:
            result = self._guard.verify_audit(allow_unanchored=p.allow_unanchored)
        elif self._monitor is not None:
            from audit.verify import verify_log
            from guard._home import AUDIT_LOG_FILE

            result = verify_log(
                self.home / AUDIT_LOG_FILE,
                self._monitor.keyring.public_keys(),
                allow_unanchored=p.allow_unanchored,
            )
        else:
            self._need_guard()
            raise AssertionError("unreachable")
        dumped: dict[str, Any] = result.model_dump(mode="json")
        return dumped


def _problem_lines(problems: tuple[str, ...]) -> list[str]:
    """``/guard``'s policy lines: ok, or each problem (the guard runs stricter meanwhile)."""
    if not problems:
        return ["  policy:       ok"]
    plural = "s" if len(problems) != 1 else ""
    head = f"  policy:       {len(problems)} problem{plural} (the guard runs stricter meanwhile)"
    more = [f"    (and {len(problems) - 5} more)"] if len(problems) > 5 else []
    return [head, *(f"    {p}" for p in problems[:5]), *more]
