"""``pi-guard serve``: JSON-RPC 2.0 over stdio, one JSON object per LF-terminated line.

The pi extension shim starts this process once per session and asks it everything: every
decision (classify, what the dialog says, why a call is blocked) is made here, in Python.

Framing (same rules as pi's own RPC mode): records are split on ``\\n`` only, a trailing ``\\r``
is stripped, U+2028/U+2029 stay inside strings, a last line without LF still counts. A line
longer than :data:`MAX_LINE_BYTES` is discarded while it streams in (memory stays bounded) and
answered with an error. Bad input of any kind becomes a JSON-RPC error object; the loop keeps
serving. Only JSON-RPC goes to stdout; logs go to stderr (structlog).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO, Literal

import structlog
from pydantic import BaseModel, Field, ValidationError, model_validator

from audit import AuditError
from guard._classifier import Classifier
from guard._errors import BadInputError, GuardError
from guard._fingerprint import WIRE_CONFIG
from guard._guard import LEDGER_FILE, DeclineReason, Guard
from guard._home import resolve_home
from guard._keys import KEYRING_FILE, PublicKeyring
from guard._ledger import SqliteLedger
from guard._logging import configure_logging, get_logger
from guard._models import (
    DEFAULT_TTL_SECONDS,
    EVIDENCE_CUSTOM_TYPE,
    ConsumeResult,
    Evaluation,
    RecordResult,
)
from planning import PlanInputError

__all__ = [
    "MAX_LINE_BYTES",
    "PLANNER_TOOL_NAME",
    "PROTOCOL",
    "Frame",
    "LineSplitter",
    "RpcCode",
    "Sidecar",
    "decode_request",
    "encode_message",
    "error_response",
    "iter_frames",
    "serve",
    "session_envelopes",
]

PROTOCOL = "pi-operator-guard/sidecar/v1"
MAX_LINE_BYTES = 1 << 20
READ_CHUNK = 64 * 1024
PLANNER_TOOL_NAME = "operator_confirmation_implementation_channel_plan"
_HEAD_BYTES = 256
# Only an id that opens the object (optionally after "jsonrpc") counts: never a nested one.
_HEAD_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]{1,15}|"[^"\\]{0,128}")\s*,'
)
_log = get_logger("guard.sidecar")


# -- framing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One record: ``data`` is the line without LF and trailing CR.

    ``oversize`` > 0 means the line was longer than the limit and was discarded
    (``data`` is then empty, ``oversize`` is its length in bytes and ``head`` keeps its
    first bytes, enough to name the request id in the error).
    """

    data: bytes
    oversize: int = 0
    head: bytes = field(default=b"", compare=False)


@dataclass(slots=True)
class LineSplitter:
    """Incremental LF splitter with a per-line byte limit and bounded memory."""

    max_line: int = MAX_LINE_BYTES
    _buffer: bytearray = field(default_factory=bytearray)
    _discarding: int = 0
    _head: bytes = b""

    def feed(self, chunk: bytes) -> list[Frame]:
        """Add bytes; return every record completed by them."""
        frames: list[Frame] = []
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                break
            frames.append(self._close())
            start = end + 1
        return frames

    def finish(self) -> list[Frame]:
        """End of input: a last line without LF is still a record (an empty rest is not)."""
        if self._discarding or self._buffer:
            return [self._close()]
        return []

    def _take(self, piece: bytes) -> None:
        if self._discarding:
            self._discarding += len(piece)
            return
        self._buffer += piece
        # One extra byte for a CR that CRLF input puts before the LF.
        if len(self._buffer) > self.max_line + 1:
            self._discarding = len(self._buffer)
            self._head = bytes(self._buffer[:_HEAD_BYTES])
            self._buffer = bytearray()

    def _close(self) -> Frame:
        if self._discarding:
            size, self._discarding = self._discarding, 0
            return Frame(b"", oversize=size, head=self._head)
        data = bytes(self._buffer)
        self._buffer = bytearray()
        if data.endswith(b"\r"):
            data = data[:-1]
        if len(data) > self.max_line:
            return Frame(b"", oversize=len(data), head=data[:_HEAD_BYTES])
        return Frame(data)


def iter_frames(
    stream: BinaryIO, *, max_line: int = MAX_LINE_BYTES, chunk: int = READ_CHUNK
) -> Iterator[Frame]:
    """Records from a binary stream, reading at most ``chunk`` bytes at a time.

    ``readline(limit)`` returns as soon as a LF arrives, so an interactive pipe is served
    line by line without waiting for a full chunk.
    """
    splitter = LineSplitter(max_line)
    while True:
        piece = stream.readline(chunk)
        if not piece:
            yield from splitter.finish()
            return
        yield from splitter.feed(piece)


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


class _Fault(Exception):
    """A JSON-RPC error to send back; ``data`` always has a kebab-case ``reason``."""

    def __init__(self, code: int, message: str, reason: str, **data: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: dict[str, Any] = {"reason": reason, **data}


RequestId = str | int | None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_request(frame: Frame) -> Any:
    """The JSON value of one record, or a :class:`_Fault` (parse error / oversize)."""
    if frame.oversize:
        raise _Fault(
            RpcCode.INVALID_REQUEST,
            "Invalid Request",
            "line-too-long",
            limitBytes=MAX_LINE_BYTES,
            sizeBytes=frame.oversize,
        )
    try:
        text = frame.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Fault(RpcCode.PARSE_ERROR, "Parse error", "not-utf8", offset=exc.start) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        detail: dict[str, Any] = {"detail": str(exc)[:200]}
        if isinstance(exc, json.JSONDecodeError):
            detail = {"detail": exc.msg, "offset": exc.pos}
        raise _Fault(RpcCode.PARSE_ERROR, "Parse error", "invalid-json", **detail) from None


def _recover_id(head: bytes) -> RequestId:
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


# -- params and replies (the wire shapes; JSON Schemas come from these) ------------------------


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class NoParams(_Wire):
    """Methods that take no parameters accept ``{}`` or no ``params`` at all."""


class CallParams(_Wire):
    """A pending tool call, exactly as pi shows it to the extension."""

    tool_name: str = Field(min_length=1, max_length=256)
    input: dict[str, Any]
    cwd: str = Field(min_length=1, max_length=4096)
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)


class EvaluateParams(CallParams):
    has_ui: bool = True
    confirm_timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000)
    ttl_seconds: int = Field(default=DEFAULT_TTL_SECONDS, ge=1, le=600)


class RecordParams(CallParams):
    confirmed: bool
    ttl_seconds: int = DEFAULT_TTL_SECONDS
    decline_reason: DeclineReason = "declined"


class DeclinedParams(CallParams):
    reason: DeclineReason
    confirm_timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000)


class ConsumeParams(CallParams):
    """Give the envelope itself, or the pi session file to take it from.

    With ``sessionFile``, the envelope is the last ``operator-confirmation-evidence`` custom
    entry whose ``details.toolCallId`` equals ``toolCallId`` (or the last one at all when no
    ``toolCallId`` is given); none found is the ``missing`` decision.
    """

    envelope: dict[str, Any] | str | None = None
    session_file: str | None = Field(default=None, min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _one_source(self) -> ConsumeParams:
        if (self.envelope is None) == (self.session_file is None):
            raise ValueError("give exactly one of envelope and sessionFile")
        return self


class ToolExecutedParams(CallParams):
    tool_call_id: str = Field(min_length=1, max_length=256)
    is_error: bool
    evidence_id: str | None = Field(default=None, min_length=1, max_length=128)


class PlanParams(_Wire):
    planner: str = Field(default="channel", min_length=1, max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)


class VerifyParams(_Wire):
    allow_unanchored: bool = False


class Dialog(_Wire):
    """What ``ctx.ui.confirm`` shows: it names the exact action."""

    title: str
    message: str


class EvaluateReply(_Wire):
    """``evaluate`` for the shim: the evaluation plus what to do with the call.

    ``action``: ``allow`` (let it run, ask nobody), ``confirm`` (show ``dialog``) or
    ``block`` (return ``blockReason`` to pi; already audited when ``audited``).
    """

    evaluation: Evaluation
    action: Literal["allow", "confirm", "block"]
    dialog: Dialog | None = None
    block_reason: str | None = None
    audited: bool = False


class DeclinedReply(_Wire):
    record: RecordResult
    block_reason: str


class PlannerTool(_Wire):
    """A pi tool definition; ``parameters`` is the planner input model's JSON Schema."""

    name: str
    label: str
    description: str
    planner: str
    parameters: dict[str, Any]


# -- the monitor consumer's source: envelopes in a pi session file ---------------------------


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
            except ValueError:
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


# -- text the operator and the model read ------------------------------------------------------


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


def _action_lines(evaluation: Evaluation, tool_name: str) -> list[str]:
    fp = evaluation.fingerprint
    lines = [f"Tool:     {tool_name}", f"Kind:     {evaluation.action_kind}"]
    if fp is not None and fp.path is not None:
        lines.append(f"Path:     {fp.path}")
    if fp is not None and fp.scope is not None:
        lines.append(f"Scope:    {fp.scope}")
    if evaluation.targets and (fp is None or list(evaluation.targets) != [fp.path]):
        lines.append("Targets:  " + ", ".join(evaluation.targets))
    if evaluation.preview and (fp is None or evaluation.preview != fp.path):
        lines.append(f"Preview:  {evaluation.preview}")
    if fp is not None:
        lines.append(f"Payload:  {fp.payload_hash[:23]}… (hash of the exact tool input)")
    if evaluation.reasons:
        lines.append("Why:      " + "; ".join(evaluation.reasons))
    return lines


def dialog_for(
    evaluation: Evaluation, tool_name: str, *, ttl_seconds: int, confirm_timeout_ms: int
) -> Dialog:
    """The confirm dialog: tool, normalized path, command preview, payload hash prefix, expiry."""
    lines = _action_lines(evaluation, tool_name)
    lines += [
        f"Expiry:   evidence valid {ttl_seconds} s after you confirm, single use",
        f"Timeout:  no answer within {_seconds(confirm_timeout_ms)} counts as No",
        "Yes records signed, report-only evidence and lets this one call run;"
        " it authorizes nothing else.",
    ]
    title = f"operator-guard: allow {evaluation.action_kind} {tool_name}?"
    return Dialog(title=title, message="\n".join(lines))


def block_reason_for(
    reason: DeclineReason | Literal["blocked-by-policy"],
    evaluation: Evaluation,
    tool_name: str,
    *,
    confirm_timeout_ms: int = 60_000,
) -> str:
    """The text pi returns as the blocked tool result (the model and the operator read it)."""
    what = {
        "declined": "the operator declined it",
        "timeout": f"no answer within {_seconds(confirm_timeout_ms)} (a timeout counts as No)",
        "no-ui": "it needs operator confirmation but this pi session has no UI"
        " (print or JSON mode)",
        "sidecar-unavailable": "the guard sidecar was unavailable (fail closed)",
        "blocked-by-policy": "the policy blocks it outright",
    }[reason]
    target = evaluation.fingerprint.path if evaluation.fingerprint else None
    detail = f" Target: {target}." if target else ""
    shown = evaluation.preview and evaluation.preview != target
    preview = f" Preview: {evaluation.preview}." if shown else ""
    return (
        f"operator-guard blocked this {evaluation.action_kind} {tool_name} call: {what}."
        f" Nothing was run.{detail}{preview} [reason: {reason}]"
    )


# -- the planner tool --------------------------------------------------------------------------


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline local ``$ref``s so the schema stands alone (pi validates it as plain JSON Schema)."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in seen or name not in defs:
                    return {k: walk(v, seen) for k, v in node.items()}
                merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged, (*seen, name))
            return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        return node

    result: dict[str, Any] = walk(schema, ())
    return result


def planner_tools() -> list[PlannerTool]:
    """The read-only planner tool(s) the shim registers, schemas generated from the models."""
    from planning import PLANNERS

    planner = PLANNERS["channel"]
    return [
        PlannerTool(
            name=PLANNER_TOOL_NAME,
            label="Implementation channel plan",
            description=str(planner.description),
            planner="channel",
            parameters=_inline_refs(planner.input_model.model_json_schema()),
        )
    ]


# -- the backend: a full guard, or verify-only (public keyring, no signing key) ----------------


class _VerifyOnly:
    """What a monitor consumer with only the public keyring can do: consume and verify.

    No signing key is loaded, so nothing is minted and nothing is appended to an audit log
    (an audit append needs the signing key for the signed head); results go to the caller
    and to the stderr log.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.keyring = PublicKeyring.load(home / KEYRING_FILE)
        self.ledger = SqliteLedger.open(home / LEDGER_FILE)
        self.classifier = Classifier(home)

    def consume(
        self,
        envelope: Mapping[str, Any] | str | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str,
    ) -> ConsumeResult:
        from guard._consume import check_and_consume
        from guard._timeutil import now_utc

        _, pending = self.classifier.pending(tool_name, tool_input, cwd)
        return check_and_consume(
            envelope, pending, keyring=self.keyring, ledger=self.ledger, now=now_utc()
        )

    def close(self) -> None:
        self.ledger.close()


Handler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class _Method:
    params: type[BaseModel]
    handler: Handler
    verify_only_ok: bool


class Sidecar:
    """The method table and the request handling; :func:`serve` wires it to stdio."""

    def __init__(self, home: Path | None, *, verify_only: bool = False) -> None:
        self.verify_only = verify_only
        self.started = time.monotonic()
        self.requests = 0
        self.home = resolve_home(home)
        self._guard: Guard | None = None
        self._monitor: _VerifyOnly | None = None
        self._open_error: str | None = None
        try:
            if verify_only:
                self._monitor = _VerifyOnly(self.home)
            else:
                self._guard = Guard.open(self.home)
        except (GuardError, AuditError, OSError) as exc:
            # Keep serving: every call then gets a clear error and the shim fails closed.
            self._open_error = f"{type(exc).__name__}: {exc}"
            _log.error("guard-open-failed", home=str(self.home), error=self._open_error)
        self._methods: dict[str, _Method] = {
            "describe": _Method(NoParams, self._describe, True),
            "health": _Method(NoParams, self._health, True),
            "ping": _Method(NoParams, self._ping, True),
            "status": _Method(NoParams, self._status, False),
            "evaluate": _Method(EvaluateParams, self._evaluate, False),
            "record": _Method(RecordParams, self._record, False),
            "audit.declined": _Method(DeclinedParams, self._declined, False),
            "consume": _Method(ConsumeParams, self._consume, True),
            "plan": _Method(PlanParams, self._plan, False),
            "audit.toolExecuted": _Method(ToolExecutedParams, self._tool_executed, False),
            "audit.verify": _Method(VerifyParams, self._verify, True),
        }

    def close(self) -> None:
        if self._guard is not None:
            self._guard.close()
        if self._monitor is not None:
            self._monitor.close()

    # -- request handling --------------------------------------------------------------------

    def handle_frame(self, frame: Frame) -> bytes | None:
        """Answer one record: response bytes, or ``None`` for notifications."""
        try:
            message = decode_request(frame)
        except _Fault as fault:
            _log.warning("bad-frame", reason=fault.data["reason"])
            request_id = _recover_id(frame.head) if frame.oversize else None
            return encode_message(error_response(request_id, fault.code, fault.message, fault.data))
        if isinstance(message, list):
            if not message:
                return encode_message(
                    error_response(
                        None, RpcCode.INVALID_REQUEST, "Invalid Request", {"reason": "empty-batch"}
                    )
                )
            replies = [r for r in (self.handle_message(m) for m in message) if r is not None]
            return self._encode(replies) if replies else None
        reply = self.handle_message(message)
        return None if reply is None else self._encode(reply)

    def _encode(self, reply: dict[str, Any] | list[dict[str, Any]]) -> bytes:
        try:
            return encode_message(reply)
        except (TypeError, ValueError) as exc:
            _log.error("unencodable-reply", error=str(exc))
            rid = reply.get("id") if isinstance(reply, dict) else None
            return encode_message(
                error_response(
                    rid, RpcCode.INTERNAL_ERROR, "Internal error", {"reason": "unencodable-result"}
                )
            )

    def handle_message(self, message: Any) -> dict[str, Any] | None:
        """Answer one decoded JSON-RPC request object (``None`` for a notification)."""
        self.requests += 1
        request_id: RequestId = None
        notification = False
        try:
            request_id, notification, method, params = _parse_envelope(message)
            started = time.perf_counter()
            result = self._call(method, params)
            _log.debug(
                "rpc",
                method=method,
                id=request_id,
                ms=round((time.perf_counter() - started) * 1000, 3),
            )
        except _Fault as fault:
            if isinstance(fault, _IdFault):
                request_id = fault.request_id
            _log.info("rpc-error", id=request_id, code=fault.code, reason=fault.data["reason"])
            if notification:
                return None
            return error_response(request_id, fault.code, fault.message, fault.data)
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _call(self, name: str, raw_params: Any) -> Any:
        method = self._methods.get(name)
        if method is None:
            raise _Fault(
                RpcCode.METHOD_NOT_FOUND,
                "Method not found",
                "unknown-method",
                method=name[:100],
                methods=sorted(self._methods),
            )
        if self.verify_only and not method.verify_only_ok:
            raise _Fault(
                RpcCode.NOT_AVAILABLE,
                "Not available in verify-only mode",
                "verify-only",
                method=name,
            )
        if raw_params is None:
            raw_params = {}
        if not isinstance(raw_params, dict):
            raise _Fault(
                RpcCode.INVALID_PARAMS,
                "Invalid params",
                "params-not-object",
                got=type(raw_params).__name__,
            )
        try:
            params = method.params.model_validate(raw_params)
        except ValidationError as exc:
            errors = [
                {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                for e in exc.errors(include_url=False, include_input=False)[:20]
            ]
            raise _Fault(
                RpcCode.INVALID_PARAMS, "Invalid params", "invalid-params", errors=errors
            ) from None
        try:
            return method.handler(params)
        except _Fault:
            raise
        except BadInputError as exc:
            raise _Fault(
                RpcCode.BAD_INPUT,
                str(exc),
                "bad-input",
                what=exc.what,
                problem=exc.problem,
                value=exc.value,
            ) from None
        except GuardError as exc:
            raise _Fault(RpcCode.GUARD_ERROR, str(exc), "guard-error") from None
        except AuditError as exc:
            raise _Fault(RpcCode.AUDIT_ERROR, str(exc), "audit-error") from None
        except PlanInputError as exc:
            raise _Fault(
                RpcCode.BAD_INPUT,
                str(exc),
                "plan-input-invalid",
                planner=exc.planner,
                field=exc.field,
                problem=exc.problem,
                value=exc.value,
            ) from None
        except Exception as exc:  # never die on one request; the log has the stack
            _log.exception("internal-error", method=name)
            raise _Fault(
                RpcCode.INTERNAL_ERROR,
                "Internal error",
                "internal-error",
                type=type(exc).__name__,
            ) from None

    # -- methods ---------------------------------------------------------------------------------

    def _need_guard(self) -> Guard:
        if self._guard is None:
            raise _Fault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                "guard-open-failed",
                home=str(self.home),
                error=self._open_error,
            )
        return self._guard

    def _describe(self, _: NoParams) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            package_version = version("pi-operator-guard")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            package_version = "0"
        return {
            "name": "pi-operator-guard",
            "protocol": PROTOCOL,
            "version": package_version,
            "verifyOnly": self.verify_only,
            "maxLineBytes": MAX_LINE_BYTES,
            "methods": sorted(
                n for n, m in self._methods.items() if m.verify_only_ok or not self.verify_only
            ),
            "params": {n: m.params.model_json_schema() for n, m in sorted(self._methods.items())},
            "tools": [tool.model_dump(mode="json") for tool in planner_tools()],
        }

    def _ping(self, _: NoParams) -> dict[str, Any]:
        """A bare round trip: the baseline the benchmark compares the guard against."""
        return {"pong": True}

    def _health(self, _: NoParams) -> dict[str, Any]:
        key_id = None
        if self._guard is not None:
            with contextlib.suppress(GuardError):
                key_id = self._guard.key_id
        return {
            "ok": self._open_error is None,
            "pid": os.getpid(),
            "uptimeSeconds": round(time.monotonic() - self.started, 3),
            "requests": self.requests,
            "verifyOnly": self.verify_only,
            "home": str(self.home),
            "keyId": key_id,
            "error": self._open_error,
        }

    def _status(self, _: NoParams) -> dict[str, Any]:
        guard = self._need_guard()
        status = dict(guard.status())
        verify = guard.verify_audit()
        intact = verify.decision == "intact"
        status["sidecar"] = {"pid": os.getpid(), "requests": self.requests}
        status["auditIntact"] = intact
        status["text"] = "\n".join(
            [
                "operator-guard status",
                f"  key:          {status.get('keyId')}",
                f"  home:         {status.get('home')}",
                f"  audit log:    {status.get('auditLog')}",
                f"  consumed ids: {status.get('consumedIds')}",
                f"  audit verify: {'intact' if intact else 'NOT INTACT'}",
                f"  sidecar pid:  {os.getpid()} ({self.requests} requests)",
            ]
        )
        return status

    def _evaluate(self, p: EvaluateParams) -> dict[str, Any]:
        guard = self._need_guard()
        evaluation = guard.evaluate(p.tool_name, p.input, p.cwd)
        reply: EvaluateReply
        if evaluation.verdict == "allow":
            reply = EvaluateReply(evaluation=evaluation, action="allow")
        elif evaluation.verdict == "block":
            guard.record(
                p.tool_name,
                p.input,
                p.cwd,
                confirmed=False,
                tool_call_id=p.tool_call_id,
                origin="runtime-ui-confirm",
            )
            reason = block_reason_for("blocked-by-policy", evaluation, p.tool_name)
            reply = EvaluateReply(
                evaluation=evaluation, action="block", block_reason=reason, audited=True
            )
        elif not p.has_ui:
            guard.record(
                p.tool_name,
                p.input,
                p.cwd,
                confirmed=False,
                tool_call_id=p.tool_call_id,
                origin="runtime-ui-confirm",
                decline_reason="no-ui",
            )
            reason = block_reason_for("no-ui", evaluation, p.tool_name)
            reply = EvaluateReply(
                evaluation=evaluation, action="block", block_reason=reason, audited=True
            )
        else:
            dialog = dialog_for(
                evaluation,
                p.tool_name,
                ttl_seconds=p.ttl_seconds,
                confirm_timeout_ms=p.confirm_timeout_ms,
            )
            reply = EvaluateReply(evaluation=evaluation, action="confirm", dialog=dialog)
        return reply.model_dump(mode="json")

    def _record(self, p: RecordParams) -> dict[str, Any]:
        guard = self._need_guard()
        result = guard.record(
            p.tool_name,
            p.input,
            p.cwd,
            confirmed=p.confirmed,
            ttl_seconds=p.ttl_seconds,
            tool_call_id=p.tool_call_id,
            origin="runtime-ui-confirm",
            decline_reason=p.decline_reason,
        )
        return result.model_dump(mode="json")

    def _declined(self, p: DeclinedParams) -> dict[str, Any]:
        guard = self._need_guard()
        evaluation = guard.evaluate(p.tool_name, p.input, p.cwd)
        result = guard.record(
            p.tool_name,
            p.input,
            p.cwd,
            confirmed=False,
            tool_call_id=p.tool_call_id,
            origin="runtime-ui-confirm",
            decline_reason=p.reason,
        )
        reason = block_reason_for(
            p.reason, evaluation, p.tool_name, confirm_timeout_ms=p.confirm_timeout_ms
        )
        return DeclinedReply(record=result, block_reason=reason).model_dump(mode="json")

    def _consume(self, p: ConsumeParams) -> dict[str, Any]:
        envelope = p.envelope
        if p.session_file is not None:
            try:
                found = session_envelopes(Path(p.session_file), tool_call_id=p.tool_call_id)
            except OSError as exc:
                raise _Fault(
                    RpcCode.BAD_INPUT,
                    "session file unreadable",
                    "session-file-unreadable",
                    path=p.session_file,
                    error=exc.strerror,
                ) from None
            envelope = found[-1] if found else None
        if self._monitor is not None:
            result = self._monitor.consume(envelope, p.tool_name, p.input, p.cwd)
            _log.info(
                "monitor-consume",
                decision=result.decision,
                evidence_id=result.evidence_id,
                reasons=list(result.reasons),
            )
        elif self.verify_only:
            raise _Fault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                "keyring-open-failed",
                home=str(self.home),
                error=self._open_error,
            )
        else:
            result = self._need_guard().consume(envelope, p.tool_name, p.input, p.cwd)
        return result.model_dump(mode="json")

    def _plan(self, p: PlanParams) -> dict[str, Any]:
        plan = self._need_guard().plan(p.planner, p.params)
        dumped: dict[str, Any] = plan.model_dump(mode="json")
        return dumped

    def _tool_executed(self, p: ToolExecutedParams) -> dict[str, Any]:
        self._need_guard().tool_executed(
            p.tool_call_id, p.tool_name, p.input, p.cwd, p.is_error, p.evidence_id
        )
        return {"audited": True}

    def _verify(self, p: VerifyParams) -> dict[str, Any]:
        if self._guard is not None:
            result = self._guard.verify_audit(allow_unanchored=p.allow_unanchored)
        elif self._monitor is not None:
            from audit import verify_log
            from guard._guard import AUDIT_LOG_FILE

            result = verify_log(
                self.home / AUDIT_LOG_FILE,
                self._monitor.keyring.public_keys(),
                allow_unanchored=p.allow_unanchored,
            )
        else:
            self._need_guard()
            raise AssertionError("unreachable")
        dumped: dict[str, Any] = result.model_dump(mode="json")
        return dumped


def _parse_envelope(message: Any) -> tuple[RequestId, bool, str, Any]:
    """Check the JSON-RPC 2.0 request shape: ``(id, is_notification, method, params)``."""
    if not isinstance(message, dict):
        raise _Fault(
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
        raise _Fault(
            RpcCode.INVALID_REQUEST, "Invalid Request", "invalid-id", got=type(raw_id).__name__
        )
    if message.get("jsonrpc") != "2.0":
        raise _IdFault(request_id, "jsonrpc-version", 'jsonrpc must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise _IdFault(request_id, "method-missing", "method must be a non-empty string")
    extra = sorted(set(message) - {"jsonrpc", "id", "method", "params"})
    if extra:
        raise _IdFault(request_id, "unknown-member", f"unknown members: {extra[:5]}")
    return request_id, not has_id, method, message.get("params")


class _IdFault(_Fault):
    """An invalid request whose id is still known, so the error can name it."""

    def __init__(self, request_id: RequestId, reason: str, detail: str) -> None:
        super().__init__(RpcCode.INVALID_REQUEST, "Invalid Request", reason, detail=detail)
        self.request_id = request_id


# -- the loop ----------------------------------------------------------------------------------


def _install_sigterm() -> Callable[[], None]:
    """Turn SIGTERM into a clean exit of the loop (only possible in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    previous = signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def serve(
    stdin: BinaryIO, stdout: BinaryIO, *, home: Path | None, verify_only: bool = False
) -> int:
    """Run the JSON-RPC loop until EOF on ``stdin`` (or SIGTERM). Returns the exit code (0)."""
    if not structlog.is_configured():
        configure_logging()  # stdout is the JSON-RPC stream: logs must go to stderr
    restore = _install_sigterm()
    sidecar = Sidecar(home, verify_only=verify_only)
    _log.info("sidecar-started", pid=os.getpid(), home=str(sidecar.home), verify_only=verify_only)
    try:
        for frame in iter_frames(stdin):
            if not frame.oversize and not frame.data.strip():
                continue  # blank lines are keep-alives, not requests
            reply = sidecar.handle_frame(frame)
            if reply is not None:
                stdout.write(reply)
                stdout.flush()
    except BrokenPipeError:
        _log.info("sidecar-stdout-closed")
    finally:
        sidecar.close()
        restore()
        _log.info("sidecar-stopped", requests=sidecar.requests)
    return 0
