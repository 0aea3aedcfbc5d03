"""The sidecar's state and what its method parts share: the guard (or the verify-only
monitor) it serves, why it is unusable, the approval broker, the session's sandbox, and
auditing what other threads heard (refused answers, refused network requests).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from audit import AuditError, LogIntegrityError
from guard._approvals import (
    Answer,
    ApprovalBroker,
    Approver,
    Asked,
    LocalApprovals,
)
from guard._effects import Baseline, Reviewer, UnaskedTarget
from guard._errors import GuardError, RpcFault, StateError
from guard._evidence import anchor_checkpoint, anchor_dir
from guard._facade import Guard, Monitor
from guard._grants import GrantOffer, GrantRecord
from guard._logging import get_logger
from guard._pi import newer_than_tested
from guard._sandbox import SandboxPlan
from guard._sidecar.framing import RpcCode
from guard._sidecar.network import SessionNetwork
from guard._sidecar.server import RpcServer
from guard._sidecar.text import status_audit_damaged, status_home_unusable, status_on
from guard._sidecar.wire import GrantNote, SandboxPlanParams

if TYPE_CHECKING:
    from guard._approvals import ApprovalPage
    from guard._telemetry import Telemetry, TelemetryOff, TelemetryStatus

__all__ = ["SidecarState", "alive", "grant_note", "open_problem"]

_log = get_logger("guard.sidecar")


def open_problem(home: Path, exc: Exception) -> tuple[str, str]:
    """Which file could not be used and why (the OS error where there is one)."""
    if isinstance(exc, StateError):
        return exc.path, exc.problem
    if isinstance(exc, OSError):
        return str(exc.filename or home), exc.strerror or str(exc)
    return str(home), str(exc)


def grant_note(record: GrantRecord, *, uses: int, use: int | None = None) -> GrantNote:
    """A grant as the shim and ``/guard`` show it (one shape, from its signed record)."""
    return GrantNote(
        grant_id=record.grant_id,
        label=record.label,
        expires_at_iso=record.expires_at_iso,
        max_uses=record.max_uses,
        use=use,
        uses=uses,
    )


def alive(session: str) -> bool:
    """Whether the sidecar that made ``session`` (``s<pid>-<random>``) still runs."""
    try:
        pid = int(session[1:].split("-", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


MAX_REFUSAL_KINDS = 64
"""Distinct (reason, screen, question) refusals kept apart between two calls."""


class SidecarState(RpcServer):
    """What :class:`guard._sidecar.handlers.methods.Sidecar` holds (set in its ``__init__``),
    with the helpers every part uses."""

    started: float
    home: Path
    _guard: Guard | None
    _monitor: Monitor | None
    _open_error: str | None
    _open_reason: str
    _open_problem: tuple[str, str] | None
    # The log did not verify (at open or later): nothing more is signed over it.
    _damage: LogIntegrityError | None
    _sandbox: SandboxPlan | None
    _session_dir: Path
    _layers: Path
    _reviewer: Reviewer
    _approved: dict[str, tuple[str, ...]]
    _answered: set[str]
    _baseline: Baseline | None
    _quiet: tuple[str, tuple[str, ...]]
    _unasked: dict[str, tuple[UnaskedTarget, ...]]
    _offered: dict[str, tuple[GrantOffer, ...]]
    _sandbox_params: SandboxPlanParams | None
    _sandbox_stamp: tuple[tuple[str, bool, bool], ...]
    _network: SessionNetwork
    _broker: ApprovalBroker
    _local: LocalApprovals | None
    _page: ApprovalPage | None
    # Refusals heard on other threads, coalesced: (reason, approver, question) -> how many.
    _refused: dict[tuple[str, Approver, str | None], int]
    _refused_lock: threading.Lock
    # The export of decisions, when on; else why it is off (``None``: not looked at).
    _telemetry: Telemetry | None
    _telemetry_off: TelemetryOff | None

    def _need_guard(self) -> Guard:
        if self._guard is None or self._damage is not None:
            detail: dict[str, str] = {}
            if self._damage is not None:
                detail["detail"] = status_audit_damaged(self._damage.kind)
            elif self._open_problem is not None:
                path, problem = self._open_problem
                detail["detail"] = f"home unusable ({path}: {problem})"
            raise RpcFault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                self._open_reason,
                home=str(self.home),
                error=self._open_error,
                **detail,
            )
        return self._guard

    def _status_line(self) -> str:
        """The footer text for this sidecar: on, or why the home or its log is unusable."""
        if self._damage is not None:
            return status_audit_damaged(self._damage.kind)
        if self._open_problem is not None:
            return status_home_unusable(*self._open_problem)
        page = self._page.url if self._page is not None else None
        pi = self._sandbox_params.pi_version if self._sandbox_params is not None else None
        untested = pi if newer_than_tested(pi) else None
        return status_on(
            os.getpid(),
            self._sandbox.state if self._sandbox else None,
            page,
            untested,
            problems=len(self._policy_problems()),
        )

    def _policy_problems(self) -> tuple[str, ...]:
        """What is wrong in the policy files of this session's workspace (the footer and
        ``/guard`` name it: the guard runs stricter than the files say meanwhile)."""
        if self._guard is None:
            return ()
        cwd = self._sandbox.cwd if self._sandbox is not None else os.getcwd()
        try:
            return tuple(str(p) for p in self._guard.classifier.policy_for(cwd).problems)
        except (GuardError, OSError):
            return ()

    def _note_damage(self) -> None:
        """A call found the log damaged while this sidecar runs: from now on every call is
        refused for it, and the footer says so (the shim asks ``health`` again)."""
        if self._guard is None:
            return
        try:
            self._guard.audit.check()
        except LogIntegrityError as exc:
            self._damage = exc
            self._open_error = f"{type(exc).__name__}: {exc}"
            self._open_reason = "audit-integrity"
            _log.error("audit-integrity", home=str(self.home), error=self._open_error)
        except AuditError:
            return

    def _anchor(self, when: str) -> None:
        """Keep the current checkpoint in the anchor directory, if one is configured.

        Never fails a call: an anchor that cannot be written is logged (and ``doctor``
        shows what is anchored).
        """
        directory = anchor_dir()
        if directory is None or self._guard is None:
            return
        try:
            written = anchor_checkpoint(
                directory, self._guard.audit.path, self._guard.public_keyring().public_keys()
            )
        except (GuardError, AuditError, OSError) as exc:
            _log.warning("anchor-failed", when=when, anchor=str(directory.path), error=str(exc))
            return
        _log.info("anchored", when=when, size=written.size, created=written.created)

    def _note_refused(self, reason: str, approval_id: str, approver: Approver) -> None:
        """Count a refusal heard on another thread. A flood (thousands of bad requests from
        a command that found the page) stays a few records: refusals are coalesced by reason,
        screen and question, and past :data:`MAX_REFUSAL_KINDS` by reason and screen."""
        key = (reason, approver, approval_id or None)
        with self._refused_lock:
            if key not in self._refused and len(self._refused) >= MAX_REFUSAL_KINDS:
                key = (reason, approver, None)
            self._refused[key] = self._refused.get(key, 0) + 1

    def _audit_refused(self) -> None:
        """Audit the answers the listener refused since the last call (on this thread), one
        record per kind with how many there were."""
        with self._refused_lock:
            taken, self._refused = self._refused, {}
        if self._guard is None or self._damage is not None:
            return
        for (reason, approver, approval_id), count in taken.items():
            self._guard.approval_refused(reason, approver, approval_id, count=count)

    def _audit_network(self) -> list[tuple[str, int]]:
        """Audit what the allowlist proxy refused since the last call (it runs on a thread
        of its own; the log is appended on this one); the (host, port) refused."""
        taken, new = self._network.refusals()
        if self._guard is None or self._sandbox is None or self._damage is not None:
            return []  # nothing is appended to a log that does not verify
        for refused in new:
            scope = self._sandbox.cwd
            self._guard.network_refused(refused.host, refused.port, refused.reason, scope)
        return [(r.host, r.port) for r in taken]

    def _settled(self, approval_id: str | None, *, yes: bool) -> Answer | None:
        """Close question ``approval_id`` and give the answer that won (who, and the grant
        chosen with a yes); a yes that no screen gave is refused (the call stays blocked)."""
        self._audit_refused()
        if approval_id is None:
            return None
        asked: Asked | None = self._broker.result(approval_id)
        answer = asked.answer if asked is not None else None
        if yes and (answer is None or answer.decision != "yes"):
            raise RpcFault(
                RpcCode.BAD_INPUT, "no screen answered yes to this question", "not-approved"
            )
        self._broker.close(approval_id)
        return answer

    def _start_telemetry(self) -> None:
        """Export every guarded call as a span when the user's policy turns it on: the
        guard's every durable record is observed (its calls folded and queued, never
        waited on). Off, nothing of the export is imported."""
        from guard._telemetry import TelemetryOff, export_config

        assert self._guard is not None
        config = export_config(self.home)
        if isinstance(config, TelemetryOff):
            if config.reason != "not-enabled":
                _log.warning("telemetry-off", reason=config.reason, detail=config.detail)
            self._telemetry = None
            self._telemetry_off = config
            return
        from guard._telemetry import Telemetry

        telemetry = Telemetry.start(config, status_dir=self._session_dir)
        self._telemetry = telemetry
        self._guard.observer = telemetry.observe
        _log.info("telemetry-on", endpoint=config.endpoint, queue=config.settings.queue)

    def _stop_telemetry(self) -> None:
        """Export what waits, for a second at most (the rest is dropped and counted)."""
        if self._telemetry is not None:
            if self._guard is not None:
                self._guard.observer = None
            self._telemetry.close()

    def _telemetry_status(self) -> TelemetryStatus:
        """The export's status for ``/guard``."""
        from guard._telemetry import TelemetryStatus, off_status

        if self._telemetry is not None:
            return self._telemetry.status()
        if self._telemetry_off is not None:
            return off_status(self._telemetry_off)
        return TelemetryStatus(state="off", reason="the guard is unavailable")

    def _workspace(self, cwd: str) -> str:
        """The session's workspace (its sandbox's), else the call's directory."""
        return self._sandbox.cwd if self._sandbox is not None else cwd

    def _waits_headless(self, cwd: str) -> bool:
        """Whether the user's policy keeps a call of a session without a UI waiting for an
        answer from another screen (``[approvals] headless = "wait"``)."""
        policy = self._need_guard().classifier.policy_for(self._workspace(cwd))
        return policy.approvals.headless == "wait"
