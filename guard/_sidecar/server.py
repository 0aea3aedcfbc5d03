"""A JSON-RPC 2.0 server over a byte stream: method table, validation, errors, the stdio loop.

A request is validated against its method's pydantic params model; any exception becomes a
JSON-RPC error object (guard, audit and planner errors keep their own codes) and the loop keeps
serving. Only JSON-RPC goes to stdout; logs go to stderr (structlog). Besides the replies, the
server sends notifications (:meth:`RpcServer.notify`: a message without an id) from other
threads; :class:`Output` writes each message whole, one at a time.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any, BinaryIO

from pydantic import BaseModel, ValidationError

from audit import AuditError, LogIntegrityError
from guard._errors import BadInputError, GuardError, InvalidRequestFault, RpcFault
from guard._logging import get_logger
from guard._sidecar.framing import (
    Frame,
    RequestId,
    RpcCode,
    decode_request,
    encode_message,
    error_response,
    iter_frames,
    parse_request,
    recover_id,
)
from planning import PlanInputError

__all__ = ["Handler", "Method", "Output", "RpcServer", "answer_stream", "install_sigterm"]

_log = get_logger("guard.sidecar")

Handler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Method:
    """One entry of the method table; ``verify_only_ok`` keeps it callable in verify-only mode."""

    params: type[BaseModel]
    handler: Handler
    verify_only_ok: bool


class Output:
    """The one writer of a stream: the loop's replies and the notifications other threads
    send go out whole, one message at a time. Once the reader is gone (a broken pipe),
    nothing more is written."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.open = True

    def write(self, message: bytes) -> None:
        with self._lock:
            if not self.open:
                return
            try:
                self._stream.write(message)
                self._stream.flush()
            except (BrokenPipeError, ValueError):  # the reader left, or the stream closed
                self.open = False
                _log.info("sidecar-stdout-closed")


class RpcServer:
    """The request handling around a method table; one instance serves one stream."""

    def __init__(self, methods: Mapping[str, Method], *, verify_only: bool = False) -> None:
        self.methods = dict(methods)
        self.verify_only = verify_only
        self.requests = 0
        self.output: Output | None = None
        """Where :func:`answer_stream` writes, while it serves: notifications go there too."""

    def notify(self, method: str, params: BaseModel) -> bool:
        """Send a JSON-RPC notification (no id: the client answers nothing) to the client
        being served, from any thread; ``False`` when none is (nothing was sent)."""
        output = self.output
        if output is None or not output.open:
            return False
        payload = params.model_dump(mode="json", by_alias=True)
        output.write(encode_message({"jsonrpc": "2.0", "method": method, "params": payload}))
        return True

    def handle_frame(self, frame: Frame) -> bytes | None:
        """Answer one record: response bytes, or ``None`` for notifications."""
        try:
            message = decode_request(frame)
        except RpcFault as fault:
            _log.warning("bad-frame", reason=fault.data["reason"])
            request_id = recover_id(frame.head) if frame.oversize else None
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
            request_id, notification, method, params = parse_request(message)
            started = time.perf_counter()
            result = self._call(method, params)
            _log.debug(
                "rpc",
                method=method,
                id=request_id,
                ms=round((time.perf_counter() - started) * 1000, 3),
            )
        except RpcFault as fault:
            if isinstance(fault, InvalidRequestFault):
                request_id = fault.request_id
            _log.info("rpc-error", id=request_id, code=fault.code, reason=fault.data["reason"])
            if notification:
                return None
            return error_response(request_id, fault.code, fault.message, fault.data)
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _call(self, name: str, raw_params: Any) -> Any:
        method = self.methods.get(name)
        if method is None:
            raise RpcFault(
                RpcCode.METHOD_NOT_FOUND,
                "Method not found",
                "unknown-method",
                method=name[:100],
                methods=sorted(self.methods),
            )
        if self.verify_only and not method.verify_only_ok:
            raise RpcFault(
                RpcCode.NOT_AVAILABLE,
                "Not available in verify-only mode",
                "verify-only",
                method=name,
            )
        if raw_params is None:
            raw_params = {}
        if not isinstance(raw_params, dict):
            raise RpcFault(
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
            raise RpcFault(
                RpcCode.INVALID_PARAMS, "Invalid params", "invalid-params", errors=errors
            ) from None
        try:
            return method.handler(params)
        except RpcFault:
            raise
        except BadInputError as exc:
            raise RpcFault(
                RpcCode.BAD_INPUT,
                str(exc),
                "bad-input",
                what=exc.what,
                problem=exc.problem,
                value=exc.value,
            ) from None
        except GuardError as exc:
            raise RpcFault(RpcCode.GUARD_ERROR, str(exc), "guard-error") from None
        except AuditError as exc:
            reason = "audit-integrity" if isinstance(exc, LogIntegrityError) else "audit-error"
            raise RpcFault(RpcCode.AUDIT_ERROR, str(exc), reason) from None
        except PlanInputError as exc:
            raise RpcFault(
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
            raise RpcFault(
                RpcCode.INTERNAL_ERROR,
                "Internal error",
                "internal-error",
                type=type(exc).__name__,
            ) from None


# -- the loop ----------------------------------------------------------------------------------


class _Loop:
    """What the stop signals need to know of the loop: whether it waits for a request (a
    signal then ends the wait) and whether it is already ending (more signals are ignored)."""

    waiting = False
    stopping = False


_loop = _Loop()


def answer_stream(server: RpcServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer every record of ``stdin`` on ``stdout`` until EOF or a stop signal.

    A stop signal (:func:`install_sigterm`) that arrives while a request is being answered
    lets it finish first (its records are written whole). When stdout closes (pi died), the
    requests pi had already sent are still handled, unanswered: their records are not lost.
    While it serves, ``server.notify`` writes to the same ``stdout``, never inside a reply.
    """
    output = server.output = Output(stdout)
    frames = iter_frames(stdin)
    try:
        while not _loop.stopping:
            _loop.waiting = True
            try:
                frame = next(frames, None)
            finally:
                _loop.waiting = False
            if frame is None:
                return
            if not frame.oversize and not frame.data.strip():
                continue  # blank lines are keep-alives, not requests
            reply = server.handle_frame(frame)
            if reply is not None:
                output.write(reply)
    finally:
        server.output = None


def install_sigterm() -> Callable[[], None]:
    """Turn SIGTERM and SIGINT into a clean end of the loop (only possible in the main
    thread), whatever dispositions the process inherited (SIGINT may come in ignored): one
    that arrives while the loop waits for a request ends the wait (``SystemExit(0)``); one
    that arrives while a request is answered ends the loop after it; once the loop ends, more
    signals are ignored, so what the sidecar owes the log at its close is written whole."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _loop.stopping = False

    def on_term(signum: int, frame: FrameType | None) -> None:
        if _loop.stopping:
            return
        _loop.stopping = True
        if _loop.waiting:
            raise SystemExit(0)

    previous = {sig: signal.signal(sig, on_term) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _loop.stopping = False

    return restore
