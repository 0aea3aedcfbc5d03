"""The guard package's exception tree; the CLI maps it to exit codes in one table.

::

    GuardError                   base; an internal failure unless a subclass says more
    ├── BadInputError            the caller's input is refused (argument, JSON, file named)
    │   ├── TtlError             a TTL outside 1..max seconds (never clipped)
    │   ├── PolicyBlockedError   the policy blocks the action: no evidence can exist for it
    │   ├── ConfigError          a policy or extension config file is invalid
    │   │   └── GlobError        a policy pattern that does not compile
    │   ├── InstallTargetError   no such project directory, unknown target, cannot write
    │   ├── ModifiedInstallError an installed file was changed since it was installed
    │   └── PiFileError          a pi file we only read (trust.json) is not what pi accepts
    ├── StateError               the guard's own state cannot be used right now
    │   ├── HomeError            the home cannot be created or made private
    │   │   └── HomeUnderFileError  … because a file lies on its path (the caller's mistake)
    │   ├── KeyFileError         signing key missing, unreadable, unsafe or malformed
    │   ├── KeyringError         public keyring missing, unreadable or corrupted
    │   ├── LedgerError          consumption ledger cannot be opened, stays locked, or its
    │   │                        server cannot be reached (refused, lost, timed out)
    │   └── AuditStoreError      the central audit store (PostgreSQL) cannot be used
    ├── AuditStoreMismatch       the central audit store and the log disagree on a record or
    │                            head already shipped: one of them was rewritten
    ├── SandboxUnavailableError  the OS sandbox cannot start and the user's policy requires
    │                            it: the agent's commands are not run (fail closed)
    ├── MalformedEvidence        internal: an envelope failed the structural check; it
    │                            becomes a ``malformed`` decision and never escapes
    └── RpcFault                 internal: a JSON-RPC error for the sidecar to send
        └── InvalidRequestFault  … for a request whose id is still known

Every leaf keeps the offending value (shortened, both ends kept) so one line names it.
"""

from __future__ import annotations

import os
from typing import Any

from audit import shorten

__all__ = [
    "AuditStoreError",
    "AuditStoreMismatch",
    "BadInputError",
    "ConfigError",
    "GlobError",
    "GuardError",
    "HomeError",
    "HomeUnderFileError",
    "InstallTargetError",
    "InvalidRequestFault",
    "KeyFileError",
    "KeyringError",
    "LedgerError",
    "MalformedEvidence",
    "ModifiedInstallError",
    "PiFileError",
    "PolicyBlockedError",
    "RpcFault",
    "SandboxUnavailableError",
    "StateError",
    "TtlError",
]

_VALUE_LIMIT = 160


class GuardError(Exception):
    """Base of every error the guard package raises on purpose."""


class BadInputError(GuardError):
    """The caller gave input we refuse: ``what`` names the field, ``value`` the bad value."""

    def __init__(self, what: str, problem: str, value: object = None) -> None:
        self.what = what
        self.problem = problem
        self.value = None if value is None else shorten(_text(value), _VALUE_LIMIT)
        shown = f" (got {self.value})" if self.value is not None else ""
        super().__init__(f"{what}: {problem}{shown}")


class TtlError(BadInputError):
    """A TTL outside (0, max] seconds; refused, never clipped."""

    def __init__(self, ttl: object, maximum: int) -> None:
        super().__init__("ttl", f"must be an integer in 1..{maximum} seconds", ttl)


class PolicyBlockedError(BadInputError):
    """The policy blocks this action outright; no evidence can be minted for it."""

    def __init__(self, tool_name: str, reasons: list[str]) -> None:
        super().__init__("action", "blocked by policy: " + "; ".join(reasons), tool_name)


class ConfigError(BadInputError):
    """A guard configuration file is invalid: names the file, line and key."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("config", problem, _text(path))


class GlobError(ConfigError):
    """A policy pattern we cannot compile (unknown placeholder, bad character class)."""

    def __init__(self, pattern: str, problem: str) -> None:
        BadInputError.__init__(self, "pattern", problem, pattern)


class InstallTargetError(BadInputError):
    """The install target is not usable (no such project directory, unknown target)."""

    def __init__(self, problem: str, value: object) -> None:
        super().__init__("install target", problem, _text(value))


class ModifiedInstallError(BadInputError):
    """An installed file differs from what was installed; refused without ``force``."""

    def __init__(self, path: os.PathLike[str], fix: str = "use --force to replace it") -> None:
        super().__init__("install", f"was modified since it was installed ({fix})", _text(path))
        self.path = path


class PiFileError(BadInputError):
    """A file of pi's that we only read (``trust.json``) is unreadable or malformed."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("pi file", problem, _text(path))
        self.path = str(_text(path))


class StateError(GuardError):
    """The guard's own files cannot be used right now; ``path`` names which one.

    Not the caller's input and not a bug: fix the environment (permissions, a lock held
    by another process, a disk) and try again.
    """

    what = "state"

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(_text(path))
        self.problem = problem
        super().__init__(f"{self.what}: {problem} ({shorten(self.path, _VALUE_LIMIT)})")


class HomeError(StateError):
    """The guard home cannot be created, is not a directory or cannot be made private."""

    what = "home"


class HomeUnderFileError(HomeError):
    """A file lies where a directory of the home's path should be (``/dev/null/x``).

    No home can exist there whatever the state of the machine, so the CLI treats it as bad
    input; the sidecar reports it like any other unusable home.
    """


class KeyFileError(StateError):
    """The signing key file is missing, unreadable, malformed or too permissive."""

    what = "signing key"


class KeyringError(StateError):
    """The public keyring file is missing, unreadable or corrupted."""

    what = "keyring"


class LedgerError(StateError):
    """The consumption ledger cannot be opened or is locked past its busy timeout."""

    what = "ledger"


class AuditStoreError(StateError):
    """The central audit store cannot be used (connection, permission, timeout).

    ``path`` is the store's URL without its password.
    """

    what = "audit store"


class AuditStoreMismatch(GuardError):
    """A record (or head) already in the store differs from the log's: refused.

    ``source`` is the log id, ``seq`` the record (``None``: the head).
    """

    def __init__(self, source: str, seq: int | None, problem: str) -> None:
        self.source = source
        self.seq = seq
        where = f"record seq {seq}" if seq is not None else "head"
        super().__init__(f"audit store of {source}: {where}: {problem}")


class SandboxUnavailableError(GuardError):
    """The sandbox cannot start (``reason`` is the probe's code) and the policy requires it."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(f"{message} [reason: {reason}]")


class MalformedEvidence(GuardError):
    """Internal: the envelope failed the structural check. ``code`` is the reason code."""

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")


class RpcFault(GuardError):
    """A JSON-RPC error for the sidecar to send; ``data`` always has a kebab-case ``reason``."""

    def __init__(self, code: int, message: str, reason: str, **data: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: dict[str, Any] = {"reason": reason, **data}


class InvalidRequestFault(RpcFault):
    """An invalid request whose id is still known, so the error can name it."""

    def __init__(self, request_id: str | int | None, reason: str, detail: str) -> None:
        super().__init__(-32600, "Invalid Request", reason, detail=detail)
        self.request_id = request_id


def _text(value: object) -> object:
    # Paths print as their text, never as PosixPath('…'); shorten() renders the rest.
    return str(os.fspath(value)) if isinstance(value, os.PathLike) else value
