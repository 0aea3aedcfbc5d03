"""What several events' data share: the wire model base, bounded text fields and the
session a record belongs to.

Python attributes are snake_case; the wire (and the log) is camelCase. Fields that
are unknown are absent on the wire, never ``null``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from audit._records.wire import WIRE_CONFIG

__all__ = [
    "MAX_OPERATOR_REASON_CHARS",
    "AnyEvidenceId",
    "Approver",
    "CredentialId",
    "LogId",
    "OperatorReason",
    "PathText",
    "Preview",
    "Reason",
    "Reasons",
    "RuleIds",
    "SessionRef",
    "SpoolId",
    "ToolCallId",
    "ToolName",
    "WireModel",
]


# An evidence id taken from a rejected (possibly malformed) envelope: any short text.
AnyEvidenceId = Annotated[str, Field(min_length=1, max_length=256)]
LogId = Annotated[str, Field(pattern=r"^log_[A-Za-z0-9_-]{16,200}$")]
ToolName = Annotated[str, Field(min_length=1, max_length=256)]
ToolCallId = Annotated[str, Field(min_length=1, max_length=256)]
# Fingerprint fields are never truncated; the limit only keeps a line bounded.
PathText = Annotated[str, Field(min_length=1, max_length=16384)]
Preview = Annotated[str, Field(max_length=1024)]
MAX_OPERATOR_REASON_CHARS = 200
"""The longest operator reason a record keeps (after secret redaction, like a preview)."""
OperatorReason = Annotated[str, Field(min_length=1, max_length=MAX_OPERATOR_REASON_CHARS)]
Reason = Annotated[str, Field(min_length=1, max_length=512)]
Reasons = Annotated[list[Reason], Field(max_length=64)]
SpoolId = Annotated[str, Field(pattern=r"^spool_[A-Za-z0-9_-]{16,64}$")]
Approver = Literal["pi-dialog", "cli", "web"]
"""Which screen answered a question: pi's dialog, ``pi-guard approvals``, the page."""


class WireModel(BaseModel):
    """A shape of the log's wire: camelCase, strict, frozen (:data:`audit.wire.WIRE_CONFIG`)."""

    model_config = WIRE_CONFIG


CredentialId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,1366}$")]
"""A WebAuthn credential id, unpadded base64url (at most 1023 bytes, WebAuthn section 5.1)."""


class SessionRef(WireModel):
    """Which pi session a record belongs to: pi's session ``id`` and ``file`` (none for an
    ephemeral session) and the ``guard_pid`` of the sidecar that wrote it. Every record a
    session's sidecar writes carries it; a record delivered late carries the session it
    happened in when the shim kept it."""

    id: Annotated[str, Field(min_length=1, max_length=128)]
    file: PathText | None = None
    guard_pid: int | None = Field(default=None, ge=1)


RuleIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=128)]], Field(min_length=1, max_length=16)
]
