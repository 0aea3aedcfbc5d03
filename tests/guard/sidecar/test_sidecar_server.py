"""The JSON-RPC server around a method table (``guard/_sidecar/server.py``), field by field.

A small method table of our own drives the real :class:`RpcServer` and :func:`answer_stream`:
every error reply is checked for its code, message and every ``data`` member (the shim and
monitors branch on them), and the process's own log events for their names and fields
(operators alert on them). Written from the survivors of ``make mutants``.
"""

from __future__ import annotations

import io
import json
import signal
import threading
import time
from collections.abc import MutableMapping
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from audit import AuditError, LogError, LogIntegrityError
from guard._errors import BadInputError, GuardError, RpcFault
from guard._sidecar.framing import Frame, RpcCode
from guard._sidecar.server import Method, RpcServer, answer_stream, install_sigterm
from planning import PlanInputError


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    n: int
    secret: str = ""


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def boom(exc: BaseException) -> Any:
    def handler(_: Any) -> Any:
        raise exc

    return handler


def table() -> dict[str, Method]:
    return {
        "echo": Method(Strict, lambda p: {"n": p.n}, verify_only_ok=True),
        "write": Method(NoParams, lambda _: {"written": True}, verify_only_ok=False),
        "unencodable": Method(NoParams, lambda _: {"x": object()}, verify_only_ok=True),
        "nan": Method(NoParams, lambda _: {"x": float("nan")}, verify_only_ok=True),
        "bad-input": Method(
            NoParams, boom(BadInputError("toolName", "must be a string", 7)), verify_only_ok=True
        ),
        "guard-error": Method(NoParams, boom(GuardError("keyring unreadable")), True),
        "audit-error": Method(NoParams, boom(LogError("/l/audit.jsonl", "disk full")), True),
        "audit-base": Method(NoParams, boom(AuditError("plain audit trouble")), True),
        "audit-integrity": Method(
            NoParams,
            boom(LogIntegrityError("/l/audit.jsonl", "prev-mismatch", "line 3 breaks the chain")),
            True,
        ),
        "plan-input": Method(
            NoParams,
            boom(PlanInputError("flag-risk", "must be one of a, b", field="risk", value="c")),
            True,
        ),
        "fault": Method(NoParams, boom(RpcFault(-32099, "Custom", "custom", extra=1)), True),
        "crash": Method(NoParams, boom(KeyError("nope")), True),
    }


def call(server: RpcServer, method: str, params: Any = None, rid: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    reply = server.handle_message(message)
    assert reply is not None
    return reply


def error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" not in reply, reply
    assert set(reply) == {"jsonrpc", "id", "error"}
    err: dict[str, Any] = reply["error"]
    return err


def events(captured: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [e for e in captured if e["event"] == name]


# -- the method table -------------------------------------------------------------------------


def test_a_server_is_not_verify_only_unless_asked() -> None:
    assert call(RpcServer(table()), "write")["result"] == {"written": True}
    assert RpcServer(table()).verify_only is False


def test_verify_only_refuses_exactly_the_methods_not_marked_for_it() -> None:
    server = RpcServer(table(), verify_only=True)
    err = error(call(server, "write"))
    assert err == {
        "code": RpcCode.NOT_AVAILABLE,
        "message": "Not available in verify-only mode",
        "data": {"reason": "verify-only", "method": "write"},
    }
    assert call(server, "echo", {"n": 2})["result"] == {"n": 2}


def test_an_unknown_method_names_itself_shortened_and_lists_the_methods() -> None:
    server = RpcServer(table())
    err = error(call(server, "nope"))
    assert err == {
        "code": RpcCode.METHOD_NOT_FOUND,
        "message": "Method not found",
        "data": {"reason": "unknown-method", "method": "nope", "methods": sorted(table())},
    }
    long_name = "m" * 100 + "XYZ"
    data = error(call(server, long_name))["data"]
    assert data["method"] == "m" * 100


def test_params_that_are_not_an_object_name_their_type() -> None:
    server = RpcServer(table())
    for params, got in (([1], "list"), ("x", "str"), (3, "int")):
        err = error(call(server, "echo", params))
        assert err == {
            "code": RpcCode.INVALID_PARAMS,
            "message": "Invalid params",
            "data": {"reason": "params-not-object", "got": got},
        }


def test_missing_params_are_an_empty_object() -> None:
    server = RpcServer(table())
    assert call(server, "write")["result"] == {"written": True}
    err = error(call(server, "echo"))
    assert err["data"]["errors"] == [{"loc": ["n"], "msg": "Field required", "type": "missing"}]


def test_invalid_params_list_the_errors_without_the_input_or_a_url() -> None:
    server = RpcServer(table())
    err = error(call(server, "echo", {"n": "1", "secret": 5, "sk-live-LEAK": "sk-live-LEAK"}))
    assert err["code"] == RpcCode.INVALID_PARAMS
    assert err["message"] == "Invalid params"
    assert err["data"]["reason"] == "invalid-params"
    assert {tuple(e["loc"]) for e in err["data"]["errors"]} == {
        ("n",),
        ("secret",),
        ("sk-live-LEAK",),
    }
    for entry in err["data"]["errors"]:
        assert set(entry) == {"loc", "msg", "type"}
    # The caller's values (which may be secrets) are never echoed; nor is pydantic's URL.
    assert "sk-live-LEAK" not in json.dumps([e["msg"] for e in err["data"]["errors"]])
    assert "http" not in json.dumps(err)


def test_invalid_params_report_at_most_twenty_errors() -> None:
    class Many(BaseModel):
        model_config = ConfigDict(strict=True)
        a: list[int]

    server = RpcServer({"many": Method(Many, lambda p: None, verify_only_ok=True)})
    err = error(call(server, "many", {"a": [str(i) for i in range(30)]}))
    assert [e["loc"] for e in err["data"]["errors"]] == [["a", i] for i in range(20)]


# -- errors of the handlers keep their meaning -------------------------------------------------


def test_bad_input_keeps_its_field_problem_and_value() -> None:
    err = error(call(RpcServer(table()), "bad-input"))
    assert err == {
        "code": RpcCode.BAD_INPUT,
        "message": "toolName: must be a string (got 7)",
        "data": {
            "reason": "bad-input",
            "what": "toolName",
            "problem": "must be a string",
            "value": "7",
        },
    }


def test_a_guard_error_keeps_its_words() -> None:
    err = error(call(RpcServer(table()), "guard-error"))
    assert err == {
        "code": RpcCode.GUARD_ERROR,
        "message": "keyring unreadable",
        "data": {"reason": "guard-error"},
    }


def test_audit_errors_say_whether_the_log_lost_its_integrity() -> None:
    server = RpcServer(table())
    assert error(call(server, "audit-error")) == {
        "code": RpcCode.AUDIT_ERROR,
        "message": "/l/audit.jsonl: disk full",
        "data": {"reason": "audit-error"},
    }
    assert error(call(server, "audit-base")) == {
        "code": RpcCode.AUDIT_ERROR,
        "message": "plain audit trouble",
        "data": {"reason": "audit-error"},
    }
    integrity = error(call(server, "audit-integrity"))
    assert integrity["code"] == RpcCode.AUDIT_ERROR
    assert integrity["data"] == {"reason": "audit-integrity"}
    assert "line 3 breaks the chain" in integrity["message"]


def test_a_planner_input_error_names_planner_field_problem_and_value() -> None:
    err = error(call(RpcServer(table()), "plan-input"))
    assert err["code"] == RpcCode.BAD_INPUT
    assert err["message"] == str(
        PlanInputError("flag-risk", "must be one of a, b", field="risk", value="c")
    )
    assert err["data"] == {
        "reason": "plan-input-invalid",
        "planner": "flag-risk",
        "field": "risk",
        "problem": "must be one of a, b",
        "value": "c",
    }


def test_a_fault_raised_by_a_handler_is_passed_through_unchanged() -> None:
    err = error(call(RpcServer(table()), "fault"))
    assert err == {"code": -32099, "message": "Custom", "data": {"reason": "custom", "extra": 1}}


def test_an_unexpected_exception_is_an_internal_error_that_names_only_its_type(
    logs: list[MutableMapping[str, Any]],
) -> None:
    err = error(call(RpcServer(table()), "crash"))
    assert err == {
        "code": RpcCode.INTERNAL_ERROR,
        "message": "Internal error",
        "data": {"reason": "internal-error", "type": "KeyError"},
    }
    [logged] = events(logs, "internal-error")
    assert logged["method"] == "crash" and logged["log_level"] == "error"


# -- ids, notifications, counting -------------------------------------------------------------


def test_an_invalid_request_with_a_known_id_is_answered_under_that_id() -> None:
    server = RpcServer(table())
    reply = server.handle_message({"jsonrpc": "1.0", "id": 42, "method": "echo"})
    assert reply is not None and reply["id"] == 42
    assert error(reply)["data"]["reason"] == "jsonrpc-version"


def test_a_request_that_is_not_an_object_is_answered_with_a_null_id() -> None:
    reply = RpcServer(table()).handle_message([1, 2])
    assert reply is not None and reply["id"] is None
    assert error(reply)["data"] == {"reason": "not-an-object", "got": "list"}


def test_notifications_never_get_a_reply_even_when_they_fail() -> None:
    server = RpcServer(table())
    assert server.handle_message({"jsonrpc": "2.0", "method": "echo", "params": {"n": 1}}) is None
    assert server.handle_message({"jsonrpc": "2.0", "method": "crash"}) is None
    assert server.handle_message({"jsonrpc": "2.0", "method": "nope"}) is None


def test_every_request_is_counted_once() -> None:
    server = RpcServer(table())
    assert server.requests == 0
    call(server, "echo", {"n": 1})
    call(server, "nope")
    server.handle_message({"jsonrpc": "2.0", "method": "echo", "params": {"n": 1}})
    assert server.requests == 3
    server.handle_frame(
        Frame(
            json.dumps([{"jsonrpc": "2.0", "id": i, "method": "write"} for i in range(4)]).encode()
        )
    )
    assert server.requests == 7


def test_each_answered_request_is_logged_with_its_method_id_and_duration_in_ms(
    logs: list[MutableMapping[str, Any]],
) -> None:
    def slow(_: Any) -> dict[str, bool]:
        time.sleep(0.002)
        return {"slow": True}

    server = RpcServer({"slow": Method(NoParams, slow, verify_only_ok=True)})
    for n in range(5):
        call(server, "slow", rid=f"r-{n}")
    logged = events(logs, "rpc")
    assert [(e["method"], e["id"]) for e in logged] == [("slow", f"r-{n}") for n in range(5)]
    for entry in logged:
        assert isinstance(entry["ms"], float) and 2.0 <= entry["ms"] < 60_000
        assert entry["ms"] == round(entry["ms"], 3)
    # Microseconds are kept: five durations do not all end in a round millisecond.
    assert any(entry["ms"] != round(entry["ms"]) for entry in logged)


def test_each_refused_request_is_logged_with_its_id_code_and_reason(
    logs: list[MutableMapping[str, Any]],
) -> None:
    call(RpcServer(table()), "nope", rid=9)
    [logged] = events(logs, "rpc-error")
    assert {k: logged[k] for k in ("id", "code", "reason")} == {
        "id": 9,
        "code": RpcCode.METHOD_NOT_FOUND,
        "reason": "unknown-method",
    }


# -- replies that cannot be encoded -----------------------------------------------------------


@pytest.mark.parametrize("method", ["unencodable", "nan"])
def test_a_result_that_cannot_be_encoded_is_an_internal_error_under_its_id(
    method: str, logs: list[MutableMapping[str, Any]]
) -> None:
    server = RpcServer(table())
    frame = Frame(json.dumps({"jsonrpc": "2.0", "id": 5, "method": method}).encode())
    raw = server.handle_frame(frame)
    assert raw is not None and raw.endswith(b"\n") and raw.count(b"\n") == 1
    reply = json.loads(raw)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {
            "code": RpcCode.INTERNAL_ERROR,
            "message": "Internal error",
            "data": {"reason": "unencodable-result"},
        },
    }
    [logged] = events(logs, "unencodable-reply")
    assert logged["log_level"] == "error"
    assert ("not JSON serializable" if method == "unencodable" else "JSON compliant") in logged[
        "error"
    ]


def test_an_unencodable_result_in_a_batch_fails_the_batch_reply_with_a_null_id() -> None:
    server = RpcServer(table())
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "write"},
        {"jsonrpc": "2.0", "id": 2, "method": "unencodable"},
    ]
    raw = server.handle_frame(Frame(json.dumps(batch).encode()))
    assert raw is not None
    reply = json.loads(raw)
    assert reply["id"] is None
    assert reply["error"]["data"] == {"reason": "unencodable-result"}


def test_a_bad_frame_is_logged_with_its_reason(logs: list[MutableMapping[str, Any]]) -> None:
    raw = RpcServer(table()).handle_frame(Frame(b"{not json"))
    assert raw is not None and json.loads(raw)["error"]["code"] == RpcCode.PARSE_ERROR
    [logged] = events(logs, "bad-frame")
    assert logged["reason"] == json.loads(raw)["error"]["data"]["reason"]


# -- the stream loop ---------------------------------------------------------------------------


def test_blank_lines_are_skipped_and_the_requests_after_them_answered() -> None:
    lines = [
        b"\n",
        b"   \n",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"n": 1}}).encode()
        + b"\n",
        b"\t\n",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"n": 2}}).encode()
        + b"\n",
    ]
    out = io.BytesIO()
    server = RpcServer(table())
    answer_stream(server, io.BytesIO(b"".join(lines)), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["result"] for r in replies] == [{"n": 1}, {"n": 2}]
    assert server.requests == 2


class ClosedStdout(io.BytesIO):
    def write(self, data: Any) -> int:
        raise BrokenPipeError


def test_a_closed_stdout_says_so_once_and_the_requests_already_sent_are_still_handled(
    logs: list[MutableMapping[str, Any]],
) -> None:
    """pi died with requests in the pipe (a tool's ``audit.toolExecuted`` after the one being
    answered): each is still handled, so its records are written; only the replies go."""
    handled: list[int] = []
    methods = {**table(), "echo": Method(Strict, lambda p: handled.append(p.n), True)}
    requests = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "echo", "params": {"n": n}}).encode()
        + b"\n"
        for n in range(3)
    )
    answer_stream(RpcServer(methods), io.BytesIO(requests), ClosedStdout())
    assert handled == [0, 1, 2]
    assert [e["event"] for e in logs if e["event"].startswith("sidecar")] == [
        "sidecar-stdout-closed"
    ]


class SignalOnRead(io.BytesIO):
    """A stdin on which SIGTERM arrives while the loop waits for the next request."""

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        if not line:
            signal.raise_signal(signal.SIGTERM)
        return line


def test_a_stop_signal_ends_the_wait_for_a_request_with_status_0_and_can_be_undone() -> None:
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM)
    restore = install_sigterm()
    try:
        assert signal.getsignal(signal.SIGTERM) is not before
        out = io.BytesIO()
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"n": 1}})
        with pytest.raises(SystemExit) as exited:
            answer_stream(RpcServer(table()), SignalOnRead(request.encode() + b"\n"), out)
        assert exited.value.code == 0
        assert json.loads(out.getvalue())["result"] == {"n": 1}
        signal.raise_signal(signal.SIGTERM)  # the loop has ended: ignored from now on
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_during_a_request_lets_it_finish_then_ends_the_loop(
    sig: signal.Signals,
) -> None:
    """A request is never cut in half (its records are written whole); the loop ends after
    it, without reading the next one, and no more signals interrupt the close that follows."""
    handled: list[int] = []

    def slow(p: Strict) -> dict[str, int]:
        signal.raise_signal(sig)
        signal.raise_signal(sig)
        handled.append(p.n)
        return {"n": p.n}

    methods = {**table(), "echo": Method(Strict, slow, True)}
    requests = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "echo", "params": {"n": n}}).encode()
        + b"\n"
        for n in range(2)
    )
    out = io.BytesIO()
    restore = install_sigterm()
    try:
        answer_stream(RpcServer(methods), io.BytesIO(requests), out)
        signal.raise_signal(sig)
    finally:
        restore()
    assert handled == [0]
    assert [json.loads(line)["id"] for line in out.getvalue().splitlines()] == [0]


def test_sigterm_is_left_alone_outside_the_main_thread() -> None:
    before = signal.getsignal(signal.SIGTERM)
    results: list[Any] = []

    def worker() -> None:
        restore = install_sigterm()
        results.append(signal.getsignal(signal.SIGTERM))
        restore()
        results.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert results == [before, before]


def test_an_empty_batch_is_one_invalid_request() -> None:
    raw = RpcServer(table()).handle_frame(Frame(b"[]"))
    assert raw is not None
    assert json.loads(raw) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": RpcCode.INVALID_REQUEST,
            "message": "Invalid Request",
            "data": {"reason": "empty-batch"},
        },
    }


def test_a_batch_of_notifications_gets_no_reply_at_all() -> None:
    server = RpcServer(table())
    batch = [{"jsonrpc": "2.0", "method": "write"}, {"jsonrpc": "2.0", "method": "crash"}]
    assert server.handle_frame(Frame(json.dumps(batch).encode())) is None
    assert server.requests == 2
