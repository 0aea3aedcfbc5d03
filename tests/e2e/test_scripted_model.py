"""The scripted OpenAI-compatible server speaks the streaming chat-completions wire format."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tools.pi.scripted_model import MODEL_ID, ScriptedModelServer, ToolCall, Turn, models_json

SCENARIOS = {
    "two": [
        Turn(tool_calls=(ToolCall("bash", {"command": "ls"}), ToolCall("read", {"path": "a"}))),
        Turn(text="finished"),
    ]
}


def chat(server: ScriptedModelServer, messages: list[dict[str, Any]]) -> list[Any]:
    body = json.dumps({"model": MODEL_ID, "stream": True, "messages": messages}).encode()
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        events = response.read().decode().split("\n\n")
    payloads = [e.removeprefix("data: ") for e in events if e.startswith("data: ")]
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


@pytest.fixture
def server() -> Any:
    with ScriptedModelServer(SCENARIOS) as running:
        yield running


def test_first_turn_streams_tool_calls_then_finish_reason(server: ScriptedModelServer) -> None:
    chunks = chat(
        server, [{"role": "system", "content": "x"}, {"role": "user", "content": "scenario:two go"}]
    )
    calls = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks
        if "tool_calls" in c["choices"][0]["delta"]
    ]
    assert [c["function"]["name"] for c in calls] == ["bash", "read"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "ls"}
    assert len({c["id"] for c in calls}) == 2
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"]["total_tokens"] == 2


def test_the_turn_is_counted_from_assistant_messages_after_the_prompt(
    server: ScriptedModelServer,
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "scenario:two"}]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "content": "ok", "tool_call_id": "x"},
    ]
    chunks = chat(server, messages)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "finished"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [("hello", "unscripted prompt: hello"), ("scenario:nope", "unknown scenario scenario:nope")],
)
def test_unscripted_prompts_get_a_plain_answer(
    server: ScriptedModelServer, prompt: str, reply: str
) -> None:
    chunks = chat(server, [{"role": "user", "content": prompt}])
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == reply


def test_anything_else_is_a_404(server: ScriptedModelServer) -> None:
    request = urllib.request.Request(server.base_url + "/embeddings", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 404


def test_models_json_points_pi_at_the_server(server: ScriptedModelServer) -> None:
    provider = models_json(server.base_url)["providers"]["scripted"]
    assert provider["baseUrl"].startswith("http://127.0.0.1:")
    assert provider["baseUrl"].endswith("/v1")
    assert provider["api"] == "openai-completions"
    assert provider["compat"] == {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
