"""The home a session serves: the guard (or the verify-only monitor) opened on it, why it is
unusable, the damage found in its log, the anchor of its checkpoints and the export of
decisions. Every other part of the session asks it for the guard (:meth:`Home.need_guard`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from audit import AuditError, LogIntegrityError
from guard._errors import GuardError, RpcFault, StateError
from guard._evidence import anchor_checkpoint, anchor_dir
from guard._facade import Guard, Monitor
from guard._logging import get_logger
from guard._sidecar.framing import RpcCode
from guard._sidecar.text import status_audit_damaged

if TYPE_CHECKING:
    from guard._telemetry import Telemetry, TelemetryOff, TelemetryStatus

__all__ = ["Export", "Home", "open_problem"]

_log = get_logger("guard.sidecar")


def open_problem(home: Path, exc: Exception) -> tuple[str, str]:
    """Which file could not be used and why (the OS error where there is one)."""
    if isinstance(exc, StateError):
        return exc.path, exc.problem
    if isinstance(exc, OSError):
        return str(exc.filename or home), exc.strerror or str(exc)
    return str(home), str(exc)


class Home:
    """The guard opened on ``path`` (or the monitor, verify-only), or why it could not be:
    every call is then refused with that reason, and the shim fails closed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.guard: Guard | None = None
        self.monitor: Monitor | None = None
        self.open_error: str | None = None
        self.open_reason = "guard-open-failed"
        self.open_problem: tuple[str, str] | None = None
        # The log did not verify (at open or later): nothing more is signed over it.
        self.damage: LogIntegrityError | None = None

    def open(self, *, verify_only: bool) -> Guard | None:
        """Open the guard (or, verify-only, the monitor: then ``None``)."""
        if verify_only:
            self.monitor = Monitor.open(self.path)
            return None
        self.guard = Guard.open(self.path)
        return self.guard

    def failed(self, exc: GuardError | AuditError | OSError) -> None:
        """Keep serving: every call then gets a clear error and the shim fails closed."""
        self.open_error = f"{type(exc).__name__}: {exc}"
        # A log that does not verify is named as such: the guard refuses to extend it.
        self.open_reason = (
            "audit-integrity" if isinstance(exc, LogIntegrityError) else "guard-open-failed"
        )
        if isinstance(exc, LogIntegrityError):
            self.damage = exc
        self.open_problem = open_problem(self.path, exc)
        _log.error("guard-open-failed", home=str(self.path), error=self.open_error)

    @property
    def writable(self) -> Guard | None:
        """The guard, when records may be appended (``None`` once the log is damaged)."""
        return self.guard if self.damage is None else None

    def need_guard(self) -> Guard:
        """The guard, or the fault that says why there is none (or why it signs nothing)."""
        if self.guard is None or self.damage is not None:
            detail: dict[str, str] = {}
            if self.damage is not None:
                detail["detail"] = status_audit_damaged(self.damage.kind)
            elif self.open_problem is not None:
                path, problem = self.open_problem
                detail["detail"] = f"home unusable ({path}: {problem})"
            raise RpcFault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                self.open_reason,
                home=str(self.path),
                error=self.open_error,
                **detail,
            )
        return self.guard

    def note_damage(self) -> None:
        """A call found the log damaged while this sidecar runs: from now on every call is
        refused for it, and the footer says so (the shim asks ``health`` again)."""
        if self.guard is None or self.damage is not None:
            return
        try:
            self.guard.audit.check()
        except LogIntegrityError as exc:
            self.damage = exc
            self.open_error = f"{type(exc).__name__}: {exc}"
            self.open_reason = "audit-integrity"
            _log.error("audit-integrity", home=str(self.path), error=self.open_error)
        except AuditError:
            return

    def anchor(self, when: str) -> None:
        """Keep the current checkpoint in the anchor directory, if one is configured.

        Never fails a call: an anchor that cannot be written is logged (and ``doctor``
        shows what is anchored).
        """
        directory = anchor_dir()
        if directory is None or self.guard is None:
            return
        try:
            written = anchor_checkpoint(
                directory, self.guard.audit.path, self.guard.public_keyring().public_keys()
            )
        except (GuardError, AuditError, OSError) as exc:
            _log.warning("anchor-failed", when=when, anchor=str(directory.path), error=str(exc))
            return
        _log.info("anchored", when=when, size=written.size, created=written.created)

    def policy_problems(self, cwd: str) -> tuple[str, ...]:
        """What is wrong in the policy files of workspace ``cwd`` (the footer and ``/guard``
        name it: the guard runs stricter than the files say meanwhile)."""
        if self.guard is None:
            return ()
        try:
            return tuple(str(p) for p in self.guard.classifier.policy_for(cwd).problems)
        except (GuardError, OSError):
            return ()


class Export:
    """The export of decisions, when the user's policy turns it on; else why it is off
    (``None``: not looked at). Off, nothing of the export is imported."""

    def __init__(self) -> None:
        self.telemetry: Telemetry | None = None
        self.off: TelemetryOff | None = None

    def start(self, guard: Guard, home: Path, status_dir: Path) -> None:
        """Export every guarded call as a span: the guard's every durable record is observed
        (its calls folded and queued, never waited on)."""
        from guard._telemetry import TelemetryOff, export_config

        config = export_config(home)
        if isinstance(config, TelemetryOff):
            if config.reason != "not-enabled":
                _log.warning("telemetry-off", reason=config.reason, detail=config.detail)
            self.telemetry = None
            self.off = config
            return
        from guard._telemetry import Telemetry

        telemetry = Telemetry.start(config, status_dir=status_dir)
        self.telemetry = telemetry
        guard.observer = telemetry.observe
        _log.info("telemetry-on", endpoint=config.endpoint, queue=config.settings.queue)

    def stop(self, guard: Guard) -> None:
        """Export what waits, for a second at most (the rest is dropped and counted)."""
        if self.telemetry is not None:
            guard.observer = None
            self.telemetry.close()

    def status(self) -> TelemetryStatus:
        """The export's status for ``/guard``."""
        from guard._telemetry import TelemetryStatus, off_status

        if self.telemetry is not None:
            return self.telemetry.status()
        if self.off is not None:
            return off_status(self.off)
        return TelemetryStatus(state="off", reason="the guard is unavailable")
