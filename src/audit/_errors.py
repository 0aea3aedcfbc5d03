"""The audit package's exception tree: one base, leaves that carry the bad value."""

from __future__ import annotations

__all__ = ["AuditError", "CanonicalizationError"]


class AuditError(Exception):
    """Base of every error the audit package raises on purpose."""


class CanonicalizationError(AuditError):
    """A value has no RFC 8785 canonical form.

    ``code`` is a kebab-case reason; ``value`` is a short rendering of the bad value.
    """

    def __init__(self, code: str, value: str) -> None:
        self.code = code
        self.value = value[:200]
        super().__init__(f"cannot canonicalize ({code}): {self.value}")
