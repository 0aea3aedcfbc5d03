"""The monitor consumer's source: evidence envelopes the shim stored in a pi session file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guard._evidence.models import EVIDENCE_CUSTOM_TYPE
from guard._sidecar.framing import iter_frames

__all__ = ["session_envelopes"]


def session_envelopes(
    session_file: Path, *, tool_call_id: str | None = None
) -> list[dict[str, Any]]:
    """Evidence envelopes stored by the shim in a pi session file (JSONL), in file order.

    They are the ``data`` of ``{"type": "custom", "customType":
    "operator-confirmation-evidence"}`` entries. Only ``tool_call_id`` filters; nothing is
    checked here: hand each one to ``consume``, which trusts none of it. Over-long or torn
    lines are skipped, so a session being written is fine to read.
    """
    found: list[dict[str, Any]] = []
    with session_file.open("rb") as stream:
        for frame in iter_frames(stream):
            if frame.oversize or not frame.data.strip():
                continue
            try:
                entry = json.loads(frame.data)
            except (ValueError, RecursionError):
                continue
            if not isinstance(entry, dict) or entry.get("type") != "custom":
                continue
            data = entry.get("data")
            if entry.get("customType") != EVIDENCE_CUSTOM_TYPE or not isinstance(data, dict):
                continue
            details = data.get("details")
            call_id = details.get("toolCallId") if isinstance(details, dict) else None
            if tool_call_id is None or call_id == tool_call_id:
                found.append(data)
    return found
