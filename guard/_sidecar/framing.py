"""JSON-RPC 2.0 over a byte stream, one JSON object per LF-terminated line: framing and messages.

Framing is :mod:`guard._lines` (the same rules as pi's own RPC mode); a line longer than
:data:`MAX_LINE_BYTES` is discarded while it streams in and answered with an error. Every
problem with a request becomes an :class:`RpcFault`, which the server turns into a JSON-RPC
error object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from audit import JsonInputError
from audit.wire import load_json
from guard._errors import InvalidRequestFault, RpcFault
from guard._lines import MAX_LINE_BYTES, READ_CHUNK, Frame, LineSplitter, iter_frames

__all__ = [
    "MAX_LINE_BYTES",
    "READ_CHUNK",
    "Frame",
    "LineSplitter",
    "RequestId",
    "RpcCode",
    "decode_request",
    "encode_message",
    "error_response",
    "iter_frames",
    "parse_request",
    "recover_id",
]

# Only an id that opens the object (optionally after "jsonrpc") counts: never a nested one.
_HEAD_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]{1,15}|"[^"\\]{0,128}")\s*,'
)


# -- messages ----------------------------------------------------------------------------------


class RpcCode:
    """JSON-RPC 2.0 error codes; the -320xx ones are this server's."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    BAD_INPUT = -32001
    GUARD_ERROR = -32002
    AUDIT_ERROR = -32003
    NOT_AVAILABLE = -32004
    GUARD_UNAVAILABLE = -32005


RequestId = str | int | None


def decode_request(frame: Frame) -> Any:
    """The JSON value of one record, or a :class:`RpcFault` (parse error / oversize)."""
    if frame.oversize:
        raise RpcFault(
            RpcCode.INVALID_REQUEST,
            "Invalid Request",
            "line-too-long",
            limitBytes=MAX_LINE_BYTES,
            sizeBytes=frame.oversize,
        )
    try:
        # Duplicate keys are refused too: RFC 8259 leaves them undefined and parsers
        # disagree on which one wins, so such a request is ambiguous.
        return load_json(frame.data, max_bytes=MAX_LINE_BYTES)
    except JsonInputError as exc:
        detail = {"detail": exc.problem}
        if exc.value is not None:
            detail["value"] = exc.value
        raise RpcFault(RpcCode.PARSE_ERROR, "Parse error", exc.code, **detail) from None


def recover_id(head: bytes) -> RequestId:
    """The id of a discarded oversize request, when it opens the object; else ``None``.

    Lets a client waiting on that id get its error at once instead of timing out.
    """
    found = _HEAD_ID.match(head)
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, str | int) else None


def encode_message(message: Mapping[str, Any] | list[Any]) -> bytes:
    """One compact JSON line (LF-terminated). Raw U+2028/2029 may appear inside strings."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def error_response(
    request_id: RequestId, code: int, message: str, data: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response object."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = dict(data)
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def parse_request(message: Any) -> tuple[RequestId, bool, str, Any]:
    """Check the JSON-RPC 2.0 request shape: ``(id, is_notification, method, params)``."""
    if not isinstance(message, dict):
        raise RpcFault(
            RpcCode.INVALID_REQUEST,
            "Invalid Request",
            "not-an-object",
            got=type(message).__name__,
        )
    has_id = "id" in message
    raw_id = message.get("id")
    valid_id = (
        raw_id is None
        or isinstance(raw_id, str)
        or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    )
    request_id: RequestId = raw_id if valid_id else None
    if not valid_id:
        raise RpcFault(
            RpcCode.INVALID_REQUEST, "Invalid Request", "invalid-id", got=type(raw_id).__name__
        )
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequestFault(request_id, "jsonrpc-version", 'jsonrpc must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequestFault(request_id, "method-missing", "method must be a non-empty string")
    extra = sorted(set(message) - {"jsonrpc", "id", "method", "params"})
    if extra:
        raise InvalidRequestFault(request_id, "unknown-member", f"unknown members: {extra[:5]}")
    return request_id, not has_id, method, message.get("params")
