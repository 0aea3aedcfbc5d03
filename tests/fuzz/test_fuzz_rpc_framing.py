"""Fuzzing the sidecar's door: arbitrary byte streams and arbitrary JSON-RPC traffic.

Properties: the loop never dies; every reply is one well-formed JSON-RPC 2.0 response on
its own line; every request with an id gets exactly one reply, in order, carrying that id;
notifications get none; nothing is ever answered with ``Internal error`` (that code means
an exception escaped a handler: a bug, whatever the input).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from guard._sidecar.handlers.methods import RpcCode, Sidecar, iter_frames, serve

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
METHODS = (
    "evaluate",
    "evaluate",
    "record",
    "consume",
    "describe",
    "health",
    "ping",
    "status",
    "evaluate",
    "record",
    "audit.declined",
    "consume",
    "plan",
    "audit.toolExecuted",
    "audit.verify",
)
TOOLS = ("bash", "read", "write", "edit", "grep", "find", "ls", "custom_tool")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sidecar, Path]]:
    root = tmp_path_factory.mktemp("rpc-fuzz")
    project = root / "project"
    (project / "build").mkdir(parents=True)
    (project / ".env").write_text("SECRET=1\n")
    car = Sidecar(root / "home")
    yield car, project
    car.close()


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=10,
)
commands = st.sampled_from(
    [
        "ls -la",
        "rm -rf build",
        "git reset --hard",
        "git push --force origin main",
        "cat .env",
        "echo 'a\u2028b'",
        "sudo rm -rf /",
        "bash -c 'rm -rf build'",
    ]
) | st.text(max_size=60)


@st.composite
def call_params(draw: st.DrawFn, project: str, method: str) -> dict[str, Any]:
    """Mostly well-formed params for ``method`` (so handlers run), sometimes bent."""
    tool = draw(st.sampled_from(TOOLS) | st.text(max_size=12))
    if tool == "bash":
        tool_input: Any = {"command": draw(commands)}
    elif tool in ("read", "write", "edit"):
        paths = st.sampled_from([".env", "build/x", "../outside", "/etc/passwd", "~/.ssh/id_rsa"])
        tool_input = {"path": draw(paths | st.text(max_size=20))}
    else:
        tool_input = draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3))
    params: dict[str, Any] = {
        "toolName": tool,
        "input": tool_input,
        "cwd": draw(st.sampled_from([project, project, project, "/", "relative"])),
    }
    if method == "record":
        params["confirmed"] = draw(st.booleans())
    elif method == "audit.declined":
        params["reason"] = draw(st.sampled_from(["declined", "timeout", "no-ui"]))
    elif method == "audit.toolExecuted":
        params["toolCallId"] = draw(st.text(min_size=1, max_size=12))
        params["isError"] = draw(st.booleans())
    elif method == "consume":
        params["envelope"] = draw(
            json_values.filter(lambda v: v is not None) | st.text(max_size=40)
        )
    elif method == "plan":
        return {"planner": draw(st.sampled_from(["channel", "signal-source", "x"])), "params": {}}
    elif method in ("describe", "health", "ping", "status", "audit.verify"):
        return {}
    for key, strategy in (
        ("toolCallId", st.text(min_size=1, max_size=12) | st.integers()),
        ("ttlSeconds", st.integers(-5, 700)),
        ("hasUi", st.booleans()),
        ("extra", json_values),
    ):
        if draw(st.integers(0, 7)) == 0:
            params[key] = draw(strategy)
    return params


@st.composite
def messages(draw: st.DrawFn, project: str) -> Any:
    method = draw(st.sampled_from(METHODS) if draw(st.integers(0, 9)) else st.text(max_size=10))
    message: dict[str, Any] = {"jsonrpc": "2.0" if draw(st.integers(0, 19)) else "1.0"}
    message["method"] = method
    if draw(st.integers(0, 4)) > 0:
        message["id"] = draw(st.integers(-(2**40), 2**40) | st.text(max_size=8) | st.none())
    kind = draw(st.integers(0, 9))
    if kind <= 7:
        message["params"] = draw(call_params(project, method))
    elif kind == 8:
        message["params"] = draw(json_values)
    if draw(st.integers(0, 19)) == 0:
        return [message, draw(json_values)]  # a batch
    return message


def check_reply_line(line: bytes) -> dict[str, Any]:
    reply = json.loads(line)
    assert isinstance(reply, dict)
    assert reply["jsonrpc"] == "2.0"
    assert ("result" in reply) != ("error" in reply)
    if "error" in reply:
        assert reply["error"]["code"] != RpcCode.INTERNAL_ERROR, reply
        assert isinstance(reply["error"]["message"], str)
        assert reply["error"]["data"]["reason"]
    return reply


def feed(car: Sidecar, stream: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for frame in iter_frames(io.BytesIO(stream)):
        if not frame.oversize and not frame.data.strip():
            continue
        reply = car.handle_frame(frame)
        if reply is None:
            continue
        assert reply.endswith(b"\n") and reply.count(b"\n") == 1
        decoded = json.loads(reply)
        for item in decoded if isinstance(decoded, list) else [decoded]:
            reply_item = check_reply_line(json.dumps(item).encode())
            event("result" if "result" in reply_item else reply_item["error"]["data"]["reason"])
            out.append(reply_item)
    return out


@SETTINGS
@given(data=st.binary(max_size=4096))
def test_arbitrary_bytes_never_kill_the_loop(served: tuple[Sidecar, Path], data: bytes) -> None:
    car, _ = served
    feed(car, data)
    # Still serving afterwards.
    (pong,) = feed(car, b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
    assert pong == {"jsonrpc": "2.0", "id": "after", "result": {"pong": True}}


@SETTINGS
@given(
    data=st.data(),
    separators=st.lists(st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\n  \n"]), min_size=1),
)
def test_arbitrary_json_rpc_traffic_gets_one_reply_per_request(
    served: tuple[Sidecar, Path], data: st.DataObject, separators: list[bytes]
) -> None:
    car, project = served
    batch = data.draw(st.lists(messages(str(project)), min_size=1, max_size=6))
    garbage = data.draw(
        st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=2)
    )
    lines = [json.dumps(m, ensure_ascii=data.draw(st.booleans())).encode() for m in batch]
    stream = b""
    for index, line in enumerate([*lines, *garbage]):
        stream += line + separators[index % len(separators)]
    replies = feed(car, stream)
    # Single (non-batch) well-formed requests with an id: exactly one reply each, in order.
    wanted = [
        m["id"]
        for m in batch
        if isinstance(m, dict) and "id" in m and m.get("jsonrpc") == "2.0" and m.get("method")
    ]
    got_ids = [r.get("id") for r in replies]
    position = 0
    for request_id in wanted:
        assert request_id in got_ids[position:], (request_id, got_ids)
        position = got_ids.index(request_id, position) + 1


def test_the_real_loop_survives_a_fuzzed_session(tmp_path: Path) -> None:
    stream = b"\n".join(
        [
            b"\x00\xff\xfe garbage",
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            b"[]",
            b"[1,2,3]",
            b'{"jsonrpc":"2.0","method":"ping"}',
            b'{"jsonrpc":"2.0","id":2,"method":"evaluate","params":[]}',
            b'{"jsonrpc":"2.0","id":3,"method":"evaluate","params":{"toolName":"bash"}}',
            b'{"jsonrpc":"2.0","id":4,"method":"ping"',
        ]
    )
    out = io.BytesIO()
    assert serve(io.BytesIO(stream), out, home=tmp_path / "home") == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 7  # the notification gets no reply; every other line one
    replies = []
    for line in lines:
        decoded = json.loads(line)
        for item in decoded if isinstance(decoded, list) else [decoded]:
            replies.append(check_reply_line(json.dumps(item).encode()))
    assert [r.get("id") for r in replies if "result" in r] == [1]
    assert len(replies) == 9  # the batch [1, 2, 3] is answered with three errors
