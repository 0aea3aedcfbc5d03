"""What the facade's records say of a call: why it ended unasked or declined, its fingerprint
as an event's fields, its one redacted line, and the operator's reason as kept."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from audit.log import redact_preview
from audit.wire import MAX_OPERATOR_REASON_CHARS
from guard._errors import BadInputError
from guard._evidence import Fingerprint
from guard._policy import PI_TOOLS, Verdict

__all__ = [
    "BlockReason",
    "DeclineReason",
    "LateDeclineReason",
    "fingerprint_fields",
    "operator_reason_text",
    "preview_of",
]

DeclineReason = Literal["declined", "timeout", "no-ui", "sidecar-unavailable", "stopped"]
BlockReason = Literal["sidecar-unavailable", "sandbox-unavailable", "stopped"]
"""Why the guard stopped a call without asking anyone (any call, local-safe included)."""
# A late decline may also be a yes the sidecar died before recording: the call was blocked.
LateDeclineReason = (
    DeclineReason
    | Literal["confirmed-unrecorded", "input-changed-after-decision", "sandbox-unavailable"]
)


def operator_reason_text(reason: str | None) -> str | None:
    """The operator's decline reason as it is kept and shown: one line, secrets redacted,
    at most :data:`audit.MAX_OPERATOR_REASON_CHARS` characters; ``None`` when nothing is left.
    """
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise BadInputError("operator reason", "must be text", type(reason).__name__)
    return redact_preview(reason, limit=MAX_OPERATOR_REASON_CHARS) or None


def fingerprint_fields(fp: Fingerprint | None) -> dict[str, Any]:
    """A call's fingerprint as an event model's keyword arguments (``action_kind``,
    ``tool_name``, ``path``, ``scope``, ``payload_hash``); none for no fingerprint."""
    return {} if fp is None else fp.model_dump(mode="json", by_alias=False, exclude_none=True)


def preview_of(tool_name: str, tool_input: Mapping[str, Any], verdict: Verdict) -> str:
    """What the call is, in one redacted line: the command, the path, or (a tool the guard
    does not know) its arguments as compact JSON."""
    command = tool_input.get("command")
    if isinstance(command, str):
        return redact_preview(command)
    if verdict.path is not None and tool_name in PI_TOOLS:
        return redact_preview(verdict.path)
    if tool_name in PI_TOOLS or not tool_input:
        return ""
    return redact_preview(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":")))
