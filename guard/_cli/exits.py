"""Exit codes of ``pi-guard`` and the one table that maps our exceptions to them.

===  =====================================================================================
 0   ok, consumed, intact, no gaps
 1   unexpected internal error (a bug: one line on stderr, the traceback with
     ``PI_OPERATOR_GUARD_DEBUG=1``)
 2   bad usage or bad input (an argument, JSON text, a file named on the command line)
 3   evidence rejected (also a DSSE envelope ``evidence verify-dsse`` refuses)
 4   audit integrity failure (also: the central audit store and the log disagree)
 5   the audit report found gaps
 6   the guard's own state cannot be used (home, signing key, keyring, ledger, log file,
     a PostgreSQL ledger or audit store that cannot be reached): fix the environment and retry
 7   the OS sandbox cannot start here (``pi-guard sandbox check``: bubblewrap missing, user
     namespaces disabled, unsupported platform); with ``[sandbox] mode = "required"`` the
     agent's commands are blocked
 8   ``doctor``: the guard would not load, or not work, for that folder (a check failed)
===  =====================================================================================
"""

from __future__ import annotations

from enum import IntEnum

from audit import (
    AuditError,
    CanonicalizationError,
    JsonInputError,
    LogClosedError,
    LogFormatError,
    LogIntegrityError,
    LogNotAFileError,
    LogNotFoundError,
    LogWriteError,
    NoteError,
    ProofError,
    RecordDataError,
    UsageError,
)
from guard._errors import (
    AuditStoreMismatch,
    BadInputError,
    GuardError,
    HomeUnderFileError,
    SandboxUnavailableError,
    StateError,
)
from planning import PlanningError

__all__ = ["ExitCode", "exit_for"]


class ExitCode(IntEnum):
    """What a ``pi-guard`` exit status means."""

    OK = 0
    INTERNAL = 1
    BAD_INPUT = 2
    REJECTED = 3
    TAMPERED = 4
    GAPS = 5
    STATE = 6
    SANDBOX = 7
    NOT_GUARDED = 8


# First match wins: leaves before their bases.
_TABLE: tuple[tuple[type[Exception], ExitCode, str], ...] = (
    (LogFormatError, ExitCode.TAMPERED, "audit integrity failure"),
    (LogIntegrityError, ExitCode.TAMPERED, "audit integrity failure"),
    (RecordDataError, ExitCode.TAMPERED, "audit integrity failure"),
    (LogNotFoundError, ExitCode.BAD_INPUT, "error"),
    (LogNotAFileError, ExitCode.BAD_INPUT, "error"),
    (UsageError, ExitCode.BAD_INPUT, "error"),
    (CanonicalizationError, ExitCode.BAD_INPUT, "error"),
    (JsonInputError, ExitCode.BAD_INPUT, "error"),
    (NoteError, ExitCode.BAD_INPUT, "error"),
    (ProofError, ExitCode.BAD_INPUT, "error"),
    (LogWriteError, ExitCode.STATE, "audit log unusable"),
    (LogClosedError, ExitCode.INTERNAL, "internal error"),
    (AuditError, ExitCode.INTERNAL, "internal error"),
    (AuditStoreMismatch, ExitCode.TAMPERED, "audit integrity failure"),
    (BadInputError, ExitCode.BAD_INPUT, "error"),
    (HomeUnderFileError, ExitCode.BAD_INPUT, "error"),
    (PlanningError, ExitCode.BAD_INPUT, "error"),
    (StateError, ExitCode.STATE, "error"),
    (SandboxUnavailableError, ExitCode.SANDBOX, "sandbox unavailable"),
    (GuardError, ExitCode.INTERNAL, "internal error"),
)


def exit_for(exc: Exception) -> tuple[ExitCode, str] | None:
    """The exit code and message prefix for one of our errors; ``None`` for anything else."""
    for kind, code, prefix in _TABLE:
        if isinstance(exc, kind):
            return code, prefix
    return None
