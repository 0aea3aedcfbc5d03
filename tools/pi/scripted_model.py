"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 driving pi's real tool loop.

Stateless by design, so several pi processes can share one server: the scenario is named by the
last user message (``scenario:NAME``) and the turn is the number of assistant messages after that
user message. Each turn is either a list of tool calls or a final text. Used by ``make demo`` and
the end-to-end tests; it never talks to anything but loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MODEL_ID", "PROVIDER", "ScriptedModelServer", "ToolCall", "Turn", "models_json"]

PROVIDER = "scripted"
MODEL_ID = "scripted-tool-caller"
_SCENARIO_PREFIX = "scenario:"
_MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted model makes: the tool name and its JSON arguments."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    """One assistant turn: tool calls (finish reason ``tool_calls``) or, when empty, ``text``."""

    tool_calls: tuple[ToolCall, ...] = ()
    text: str = ""


@dataclass
class _State:
    scenarios: dict[str, tuple[Turn, ...]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    # (received, answered) per request, time.monotonic(): what pi did between two requests
    times: list[tuple[float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def models_json(base_url: str) -> dict[str, Any]:
    """The ``models.json`` (in ``$PI_CODING_AGENT_DIR``) that points pi at this server, offline."""
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "scripted-local-key",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": MODEL_ID,
                        "name": "Scripted tool caller",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _pick_turn(
    scenarios: Mapping[str, Sequence[Turn]], messages: Sequence[Mapping[str, Any]]
) -> Turn:
    last_user = -1
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            last_user = index
    if last_user < 0:
        return Turn(text="no user message")
    prompt = _text_of(messages[last_user].get("content")).strip()
    name = prompt.split()[0] if prompt else ""
    if not name.startswith(_SCENARIO_PREFIX):
        return Turn(text=f"unscripted prompt: {prompt[:80]}")
    turns = scenarios.get(name[len(_SCENARIO_PREFIX) :])
    if turns is None:
        return Turn(text=f"unknown scenario {name}")
    done = sum(1 for message in messages[last_user + 1 :] if message.get("role") == "assistant")
    return turns[done] if done < len(turns) else Turn(text="done")


def _chunk(completion_id: str, delta: Mapping[str, Any], finish: str | None) -> bytes:
    body = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }
    if finish is not None:
        body["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _stream(turn: Turn, call_prefix: str) -> list[bytes]:
    completion_id = f"chatcmpl-{call_prefix}"
    chunks = [_chunk(completion_id, {"role": "assistant", "content": ""}, None)]
    if turn.tool_calls:
        for index, call in enumerate(turn.tool_calls):
            delta = {
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"call_{call_prefix}_{index}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                ]
            }
            chunks.append(_chunk(completion_id, delta, None))
        chunks.append(_chunk(completion_id, {}, "tool_calls"))
    else:
        chunks.append(_chunk(completion_id, {"content": turn.text}, None))
        chunks.append(_chunk(completion_id, {}, "stop"))
    chunks.append(b"data: [DONE]\n\n")
    return chunks


def _handler_for(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the default per-request stderr line."""

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                body = {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]}
                self._reply(200, json.dumps(body).encode(), "application/json")
                return
            self._reply(404, b'{"error":"not found"}', "application/json")

        def do_POST(self) -> None:
            received = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            if self.path.rstrip("/") != "/v1/chat/completions" or not 0 < length <= _MAX_BODY:
                self._reply(404, b'{"error":"not found"}', "application/json")
                return
            try:
                request = json.loads(self.rfile.read(length))
                messages = request["messages"]
            except (ValueError, KeyError, TypeError):
                self._reply(400, b'{"error":"bad request"}', "application/json")
                return
            with state.lock:
                state.requests.append(request)
                serial = len(state.requests)
            turn = _pick_turn(state.scenarios, messages)
            body = b"".join(_stream(turn, f"{serial}x{len(messages)}"))
            self._reply(200, body, "text/event-stream")
            with state.lock:
                state.times.append((received, time.monotonic()))

    return Handler


class ScriptedModelServer:
    """Serve ``scenarios`` on ``127.0.0.1:<free port>`` from a background thread."""

    def __init__(self, scenarios: Mapping[str, Sequence[Turn]]) -> None:
        self._state = _State({name: tuple(turns) for name, turns in scenarios.items()})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self._state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ending in ``/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of every chat-completions request body received so far."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def times(self) -> list[tuple[float, float]]:
        """When each request arrived and when its answer was sent (``time.monotonic()``), in
        the order the answers went out."""
        with self._state.lock:
            return list(self._state.times)

    def add_scenario(self, name: str, turns: Sequence[Turn]) -> None:
        """Add or replace a scenario while serving."""
        with self._state.lock:
            self._state.scenarios[name] = tuple(turns)

    def start(self) -> ScriptedModelServer:
        """Start serving; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
