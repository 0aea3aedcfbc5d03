"""The sidecar never turns an error into an allow: every failure is a JSON-RPC error.

The shim blocks the call on any error reply, so an error is fail-closed; an ``allow`` result
produced from an exception would be fail-open. These tests break the guard under a running
sidecar (a real one, over a real home) and look for the error — and for the absence of a result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from guard._errors import GuardError
from guard._sidecar.framing import Frame, RpcCode
from guard._sidecar.handlers.methods import Sidecar
from guard._sidecar.server import Method, RpcServer
from guard._sidecar.wire import NoParams


def request(method: str, params: Any = None, request_id: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def assert_error_not_allow(reply: Any, code: int, reason: str) -> None:
    assert reply is not None
    assert "result" not in reply, reply
    assert reply["error"]["code"] == code
    assert reply["error"]["data"]["reason"] == reason
    assert "allow" not in json.dumps(reply)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    (root / "README.md").write_text("hi\n")
    return root


def evaluate(project: Path, tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"toolName": tool_name, "input": tool_input, "cwd": str(project)}


@pytest.mark.parametrize(
    ("tool_name", "tool_input"),
    [("read", {"path": "README.md"}), ("bash", {"command": "rm -rf build"})],
)
def test_a_guard_error_from_evaluate_is_an_error_never_an_allow(
    tmp_path: Path, project: Path, tool_name: str, tool_input: dict[str, Any]
) -> None:
    home = tmp_path / "home"
    sidecar = Sidecar(home)
    try:
        before = sidecar.handle_message(
            request("evaluate", evaluate(project, tool_name, tool_input))
        )
        assert before is not None and "result" in before
        # Another process leaves a keyring the guard cannot read: evaluate raises a GuardError.
        (home / "keyring.json").write_text("{not json")
        after = sidecar.handle_message(
            request("evaluate", evaluate(project, tool_name, tool_input))
        )
        assert_error_not_allow(after, RpcCode.GUARD_ERROR, "guard-error")
        pong = sidecar.handle_message(request("ping"))
        assert pong is not None and pong["result"] == {"pong": True}
    finally:
        sidecar.close()


def test_bad_input_to_evaluate_is_an_error_never_an_allow(tmp_path: Path, project: Path) -> None:
    sidecar = Sidecar(tmp_path / "home")
    try:
        tool_input = {"path": "README.md", "n": int("9" * 300)}  # no canonical JSON form
        reply = sidecar.handle_message(request("evaluate", evaluate(project, "read", tool_input)))
        assert_error_not_allow(reply, RpcCode.BAD_INPUT, "bad-input")
    finally:
        sidecar.close()


class _Boom(RuntimeError):
    pass


def _server() -> RpcServer:
    def raise_unexpected(_: NoParams) -> dict[str, Any]:
        raise _Boom("a bug in a handler")

    def raise_guard_error(_: NoParams) -> dict[str, Any]:
        raise GuardError("the guard failed")

    def raise_key_error(_: NoParams) -> dict[str, Any]:
        raise KeyError("missing")

    params: type[BaseModel] = NoParams
    return RpcServer(
        {
            "evaluate": Method(params, raise_unexpected, True),
            "consume": Method(params, raise_key_error, True),
            "guard": Method(params, raise_guard_error, True),
            "ping": Method(params, lambda _: {"pong": True}, True),
        }
    )


@pytest.mark.parametrize("method", ["evaluate", "consume"])
def test_an_unexpected_handler_exception_is_an_internal_error_never_an_allow(method: str) -> None:
    server = _server()
    reply = server.handle_message(request(method, request_id=7))
    assert_error_not_allow(reply, RpcCode.INTERNAL_ERROR, "internal-error")
    assert reply is not None and reply["id"] == 7
    assert reply["error"]["message"] == "Internal error"
    assert reply["error"]["data"]["type"] in {"_Boom", "KeyError"}
    assert server.handle_message(request("ping")) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"pong": True},
    }


def test_an_unexpected_exception_in_a_batch_is_an_error_for_that_request_only() -> None:
    server = _server()
    line = json.dumps([request("evaluate", request_id=1), request("ping", request_id=2)])
    raw = server.handle_frame(Frame(line.encode(), oversize=0, head=b""))
    assert raw is not None
    first, second = json.loads(raw)
    assert_error_not_allow(first, RpcCode.INTERNAL_ERROR, "internal-error")
    assert second["result"] == {"pong": True}


def test_a_guard_error_from_a_handler_keeps_its_code() -> None:
    reply = _server().handle_message(request("guard"))
    assert_error_not_allow(reply, RpcCode.GUARD_ERROR, "guard-error")
