"""The monitor consumer's source: evidence envelopes the shim stored in a pi session file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audit import JsonInputError
from audit.wire import load_json
from guard._evidence import EVIDENCE_CUSTOM_TYPE
from guard._lines import iter_frames

__all__ = ["session_envelopes"]


def session_envelopes(
    session_file: Path, *, tool_call_id: str | None = None
) -> list[dict[str, Any]]:
    """Evidence envelopes stored by the shim in a pi session file (JSONL), in file order.

    They are the ``data`` of ``{"type": "custom", "customType":
    "operator-confirmation-evidence"}`` entries. Only ``tool_call_id`` filters; nothing is
    checked here: hand each one to ``consume``, which trusts none of it. Over-long, torn or
    not strictly valid JSON lines are skipped, so a session being written is fine to read.
    """
    marker = EVIDENCE_CUSTOM_TYPE.encode()
    found: list[dict[str, Any]] = []
    with session_file.open("rb") as stream:
        for frame in iter_frames(stream):
            # Only lines naming the custom type can hold evidence: skip the rest unparsed.
            if frame.oversize or marker not in frame.data:
                continue
            try:
                entry = load_json(frame.data)
            except JsonInputError:
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
