"""The guard package's exception tree, caught once at the CLI boundary.

Every leaf carries the offending value (shortened) so the one-line message names it.
Exit codes (contract section 9): :class:`BadInputError` and its children -> 2,
anything else derived from :class:`GuardError` -> 1.
"""

from __future__ import annotations

__all__ = [
    "BadInputError",
    "ConfigError",
    "GuardError",
    "KeyFileError",
    "KeyringError",
    "LedgerError",
    "PolicyBlockedError",
    "TtlError",
]


def _short(value: object, limit: int = 160) -> str:
    # Keep both ends: the start says what it is, the end of a path names the file.
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "…" + text[len(text) - (limit - head - 1) :]


class GuardError(Exception):
    """Base of every error the guard package raises on purpose."""

    exit_code = 1


class BadInputError(GuardError):
    """The caller gave input we refuse: ``what`` names the field, ``value`` the bad value."""

    exit_code = 2

    def __init__(self, what: str, problem: str, value: object = None) -> None:
        self.what = what
        self.problem = problem
        self.value = None if value is None else _short(value)
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


class KeyFileError(BadInputError):
    """The signing key file is missing, unreadable, malformed or too permissive."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("signing key", problem, str(path))


class KeyringError(BadInputError):
    """The public keyring file is missing, unreadable or corrupted."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("keyring", problem, str(path))


class LedgerError(BadInputError):
    """The consumption ledger cannot be opened or is locked past its busy timeout."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("ledger", problem, str(path))


class ConfigError(BadInputError):
    """A guard configuration file is invalid: names the file, line and key."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__("config", problem, str(path))
