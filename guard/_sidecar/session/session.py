"""The session a sidecar serves: its parts, built in one place, its start (``sandbox.plan``)
and end, and the verbs of a call's life (evaluate, record, decline, consume, executed,
replay), each handed to the part whose state it concerns.

The parts that hold state: the :class:`~guard._sidecar.session.home.Home` (the guard opened
on the home, or why it could not be, and the damage of its log), the
:class:`~guard._sidecar.session.desk.Desk` (questions, answers, refusals, this session's
grants), the :class:`~guard._sidecar.session.sandbox.SessionSandbox` (plan, params, stamp,
network), the :class:`~guard._sidecar.session.effects.Effects` review (layers, baseline,
quiet settings), the :class:`~guard._sidecar.session.memo.Memo` of each call between its
requests and the :class:`~guard._sidecar.session.home.Export` of decisions. The parts that
act on them: the :class:`~guard._sidecar.session.intake.Intake` (``evaluate``), the
:class:`~guard._sidecar.session.answers.Answers` (``record``, ``audit.declined``), the
:class:`~guard._sidecar.session.consume.Consumer` (``consume``) and the
:class:`~guard._sidecar.session.status.Status` reports.

Each request classifies its call once (:meth:`guard.Guard.classify`, from the input the
request carries: the input the call runs with) and every step of the request takes that
:class:`guard._facade.consumer.ClassifiedCall`. Nothing carries it to a later request: ``record``,
``consume`` and ``audit.toolExecuted`` judge the call again when they arrive, since the
policy (its files, the paths a rule names) or the input may have changed since the question.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
from functools import cache
from pathlib import Path
from typing import Any

from audit import AuditError
from guard._errors import GuardError
from guard._home import LAYERS_DIR, SESSIONS_DIR
from guard._logging import get_logger
from guard._policy import ToolFacts
from guard._sidecar.escape import command_line
from guard._sidecar.session.answers import Answers
from guard._sidecar.session.consume import Consumer
from guard._sidecar.session.desk import Desk
from guard._sidecar.session.effects import Effects
from guard._sidecar.session.home import Export, Home
from guard._sidecar.session.intake import Intake
from guard._sidecar.session.memo import Memo
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.session.status import Status
from guard._sidecar.text import sandbox_notice
from guard._sidecar.wire import (
    ConsumeParams,
    DeclinedParams,
    EvaluateParams,
    RecordParams,
    ReplayParams,
    SandboxPlanParams,
    ToolExecutedParams,
)

__all__ = ["Session"]

_log = get_logger("guard.sidecar")


class Session:
    """One pi session's guard: its parts (see the module) and the verbs of a call's life."""

    def __init__(self, home: Path, *, verify_only: bool = False) -> None:
        # This sidecar's directory: its command layers (guard/_effects), its /tmp, the
        # listener of a second terminal, the export's status.
        self.session_dir = home / SESSIONS_DIR / f"s{os.getpid()}-{secrets.token_hex(4)}"
        self.home = Home(home)
        self.desk = Desk(self.home, self.session_dir)
        self.sandbox = SessionSandbox(self.home, self.session_dir, self.session_dir / LAYERS_DIR)
        self.memo = Memo()
        self.effects = Effects(self.home, self.desk, self.sandbox, self.memo)
        self.export = Export()
        self.status = Status(self.home, self.sandbox, self.desk, self.export)
        self.intake = Intake(self.home, self.desk, self.sandbox, self.effects, self.memo)
        self.answers = Answers(self.home, self.desk, self.sandbox, self.effects, self.memo)
        self.consumer = Consumer(self.home, verify_only=verify_only)
        try:
            guard = self.home.open(verify_only=verify_only)
            if guard is not None:
                self.export.start(guard, home, self.session_dir)
                self.home.anchor("session-start")
                self.effects.settle_old_layers()
                self.desk.start_local(self._about)
        except (GuardError, AuditError, OSError) as exc:
            self.home.failed(exc)

    def _about(self) -> dict[str, Any]:
        """Whose questions these are, for a screen outside pi (op ``about``, on the
        listener's thread: reads only): pi's session id, its folder, this sidecar's page."""
        guard = self.home.guard
        session = guard.session if guard is not None else None
        plan, page = self.sandbox.plan, self.desk.page
        return {
            "pid": os.getpid(),
            "sessionId": session.get("id") if session is not None else None,
            "cwd": plan.cwd if plan is not None else None,
            "page": page.url if page is not None else None,
        }

    # -- the session's start and end ---------------------------------------------------------

    def start(self, p: SandboxPlanParams) -> dict[str, Any]:
        """The OS sandbox for the session in ``cwd``: what the shim's bash spawn hook applies.

        Audited as ``session.started`` (the log is the one record of each session's sandbox
        state); the footer (``health``) and ``/guard`` (``status``) show it from now on.
        Without a usable home nothing can be audited and every call is blocked anyway, so
        the plan comes back without a notice (the home's problem is the one to tell).
        """
        session, settings = self.sandbox.planned(p)
        if session.effects == "review":
            # The operator's baseline, taken as the session starts (before any agent command).
            self.effects.retake_baseline(session.cwd)
            self.effects.quiet = (settings.ask, tuple(settings.regenerable))
        self.desk.start_page(session.cwd)
        guard = self.home.writable
        if guard is not None:
            attributed = guard.session
            if attributed is not None and p.session_id and attributed["id"] != p.session_id:
                guard.sessions.ended("switched")  # pi moved to another session
            guard.attribute(p.session_id or f"sidecar-{os.getpid()}", p.session_file)
            for tool in p.tools:
                guard.classifier.learn(tool)
            guard.sessions.started(
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
        notice = sandbox_notice(session) if self.home.guard is not None else None
        _warm_redaction()
        return self.sandbox.reply(session, notice).model_dump(mode="json")

    def close(self) -> None:
        """The session ends: open questions are withdrawn, what still waits for the operator
        is discarded (audited, unless the log is damaged: nothing is signed over it), its
        /tmp and layers go."""
        self.desk.close()
        self.sandbox.close()
        guard = self.home.guard
        if guard is not None:
            if self.home.damage is None:
                self.effects.discard_held(self.effects.reviewer, "session-end")
                if guard.session is not None:
                    with contextlib.suppress(GuardError, AuditError, OSError):
                        guard.sessions.ended("shutdown")
            self.export.stop(guard)
            shutil.rmtree(self.session_dir, ignore_errors=True)
            if self.home.damage is None:
                self.home.anchor("session-end")
            guard.close()
        if self.home.monitor is not None:
            self.home.monitor.close()

    # -- a call's life -----------------------------------------------------------------------
    # -- a call's life: each verb is its part's ------------------------------------------------

    def evaluate(self, p: EvaluateParams) -> dict[str, Any]:
        """Allowed, blocked, covered by a grant, run unasked in the sandbox, or asked
        (:meth:`Intake.evaluate`)."""
        return self.intake.evaluate(p)

    def record(self, p: RecordParams) -> dict[str, Any]:
        """The operator's answer to an asked call (:meth:`Answers.record`)."""
        return self.answers.record(p)

    def decline(self, p: DeclinedParams) -> dict[str, Any]:
        """A call the shim blocked, audited (:meth:`Answers.decline`)."""
        return self.answers.decline(p)

    def consume(self, p: ConsumeParams) -> dict[str, Any]:
        """Whether the call about to run carries evidence of its approval, once
        (:meth:`Consumer.consume`)."""
        return self.consumer.consume(p)

    def executed(self, p: ToolExecutedParams) -> dict[str, Any]:
        """The call ran (``audit.toolExecuted``): audited with why it ran unasked, if so."""
        self.home.need_guard().tool_executed(
            p.tool_call_id,
            p.tool_name,
            p.input,
            p.cwd,
            p.is_error,
            p.evidence_id,
            unasked=self.memo.unasked.pop(p.tool_call_id, None),
        )
        self.sandbox.audit_network()
        return {"audited": True}

    def replay(self, p: ReplayParams) -> dict[str, Any]:
        """Append the events the shim spooled while no sidecar could take them, marked late,
        each once (:meth:`guard._facade.Spool.replay`)."""
        reply = self.home.need_guard().spool.replay(p.events)
        _log.info(
            "audit-replay",
            delivered=len(reply.delivered),
            duplicates=len(reply.duplicates),
            skipped=len(reply.skipped),
            rejected=len(reply.rejected),
        )
        return reply.model_dump(mode="json")


@cache
def _warm_redaction() -> None:
    """The first call's preview needs the redaction rules (detect-secrets' patterns, ~10 ms
    to compile): compiled once the session has started, while the model thinks, not when
    that call waits."""
    threading.Thread(target=command_line, args=("true",), name="warm", daemon=True).start()


def _tool_summary(tool: ToolFacts) -> dict[str, str]:
    out = {"name": tool.name, "source": tool.source}
    if tool.server is not None:
        out["server"] = tool.server
    return out
