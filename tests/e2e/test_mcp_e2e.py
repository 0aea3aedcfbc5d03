"""Every tool judged in the real pi: a real MCP server over stdio (tests/e2e/mcp_server.py,
the official ``mcp`` SDK) configured in the operator's ``mcp.json``, called directly, from a
``codemode`` script (alone and in parallel) and next to another extension's tool.

The server logs every call it receives, so a test knows whether a declined call reached it.
Only the current pi has MCP and codemode: these worlds run on it alone.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tools.pi.harness import NEWEST, Pick, PinnedPi, ensure_pi
from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

from .conftest import make_world
from .pi_world import World, confirms, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.npm]

REPO = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().parent / "mcp_server.py"


@pytest.fixture(scope="module")
def current_pi() -> PinnedPi:
    return ensure_pi(REPO, NEWEST)


@pytest.fixture
def mcp_world(
    tmp_path: Path,
    current_pi: PinnedPi,
    model_server: ScriptedModelServer,
    sidecar_command: list[str],
) -> World:
    return make_world(tmp_path, current_pi, model_server)


def serve(world: World, *, exposure: str = "direct", name: str = "notes") -> Path:
    """Configure the test server in the operator's own ``mcp.json``; returns its call log."""
    log = world.tmp / f"{name}-calls.jsonl"
    log.touch()
    config = {"mcpServers": {name: {"command": sys.executable, "args": [str(SERVER), str(log)],
                                    "exposure": exposure}}}  # fmt: skip
    (world.agent_dir / "mcp.json").write_text(json.dumps(config))
    return log


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def scenario(server: ScriptedModelServer, name: str, *tool_calls: ToolCall) -> str:
    server.add_scenario(name, turns(*tool_calls))
    return f"scenario:{name}"


def mcp(world: World, tool: str, server: str = "notes", **args: Any) -> ToolCall:
    return ToolCall(f"mcp__{server}__{tool}", args)


def answer_by(rules: Mapping[str, bool]) -> Any:
    """Answer each guard dialog by the first rule whose text is in its title or message."""

    def answer(request: Mapping[str, Any]) -> bool:
        text = str(request.get("title"))
        return next((yes for key, yes in rules.items() if key in text), False)

    return answer


def test_mcp_calls_ask_and_a_no_never_reaches_the_server(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world)
    victim = world.project / "a" / "keep.txt"
    prompt = scenario(
        model_server,
        "mcp-no",
        mcp(world, "delete_file", path=str(victim)),  # destructiveHint
        mcp(world, "exec", command=f"rm -rf {world.project / 'b'}"),  # no annotations
        mcp(world, "get_note", path="README.md"),  # readOnlyHint of a server nobody trusts
    )
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: False, timeout=120)
    asked = confirms(events)
    assert [d["title"].split("\n")[0] for d in asked] == [
        "operator-guard: allow protected mcp__notes__delete_file?",
        "operator-guard: allow destructive mcp__notes__exec?",
        "operator-guard: allow protected mcp__notes__get_note?",
    ]
    assert "MCP server 'notes'" in asked[0]["message"]
    assert all(end["isError"] for end in tool_ends(events))
    assert calls(log) == []  # not one of them reached the server
    assert victim.exists() and (world.project / "b" / "keep.txt").exists()
    declined = [r["data"]["toolName"] for r in world.audit("confirmation.declined")]
    assert declined == ["mcp__notes__delete_file", "mcp__notes__exec", "mcp__notes__get_note"]
    started = world.audit("session.started")[-1]["data"]
    assert started["piVersion"] == world.pi.version


def test_a_yes_runs_the_call_and_its_evidence_is_consumed_once(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world)
    victim = world.project / "c" / "keep.txt"
    prompt = scenario(model_server, "mcp-yes", mcp(world, "delete_file", path=str(victim)))
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: True, timeout=120)
    assert len(confirms(events)) == 1
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert not victim.exists()
    assert calls(log) == [{"tool": "delete_file", "args": {"path": str(victim)}}]
    (envelope,) = world.envelopes()
    assert envelope["details"]["toolName"] == "mcp__notes__delete_file"
    consume = [
        "consume", "--envelope", "-", "--tool", "mcp__notes__delete_file",
        "--input", json.dumps({"path": str(victim)}), "--cwd", str(world.project),
        "--tool-call-id", envelope["details"]["toolCallId"],
    ]  # fmt: skip
    first = world.cli(*consume, stdin=json.dumps(envelope))
    assert first.returncode == 0, first.stdout + first.stderr
    again = world.cli(*consume, stdin=json.dumps(envelope))
    assert again.returncode == 3
    assert json.loads(again.stdout)["match"]["decision"] == "consumed"


def test_a_trusted_servers_read_only_tool_runs_unasked_but_not_on_a_key(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world)
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text('[mcp]\ntrust_hints = ["notes"]\n')
    assert world.user_home is not None
    key = world.user_home / ".ssh" / "id_ed25519"
    prompt = scenario(
        model_server,
        "mcp-trusted",
        mcp(world, "get_note", path=str(world.project / "README.md")),
        mcp(world, "get_note", path=str(key)),
        mcp(world, "delete_file", path=str(world.project / "a" / "keep.txt")),
    )
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: False, timeout=120)
    asked = [d["title"].split("\n")[0] for d in confirms(events)]
    assert asked == [
        "operator-guard: allow protected mcp__notes__get_note?",  # the key
        "operator-guard: allow protected mcp__notes__delete_file?",
    ]
    assert calls(log) == [{"tool": "get_note", "args": {"path": str(world.project / "README.md")}}]
    assert any("e2e project" in result_text(end) for end in tool_ends(events))


def test_codemode_nested_calls_are_judged_one_by_one(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world, exposure="codemode")
    a, b = world.project / "a" / "keep.txt", world.project / "b" / "keep.txt"
    script = (
        f"await tools.mcp__notes__delete_file({{ path: {json.dumps(str(a))} }}).catch(e => text(String(e)));\n"
        "const both = await Promise.allSettled([\n"
        f"  tools.mcp__notes__delete_file({{ path: {json.dumps(str(b))} }}),\n"
        f"  tools.mcp__notes__exec({{ command: 'rm -rf {world.project / 'c'}' }}),\n"
        "]);\n"
        "await tools.bash({ command: 'rm -rf build' }).catch(e => text(String(e)));\n"
        "return both.map(r => r.status);\n"
    )  # fmt: skip
    prompt = scenario(model_server, "mcp-codemode", ToolCall("codemode", {"code": script}))
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: False, timeout=180)
    asked = confirms(events)
    titles = sorted(d["title"].split("\n")[0] for d in asked)
    assert titles == sorted(
        [
            "operator-guard: allow protected mcp__notes__delete_file?",
            "operator-guard: allow protected mcp__notes__delete_file?",
            "operator-guard: allow destructive mcp__notes__exec?",
            "operator-guard: allow destructive bash?",
        ]
    )
    nested = [d for d in asked if "mcp__notes" in d["title"]]
    assert all(d["message"].startswith("From:     a codemode call (") for d in nested)
    assert calls(log) == []
    for kept in (a, b, world.project / "c" / "keep.txt", world.project / "build" / "keep.txt"):
        assert kept.exists(), kept
    ids = [r["data"].get("toolCallId", "") for r in world.audit("confirmation.declined")]
    assert len(ids) == 4 and all("/" in i for i in ids)  # each nested call, its own id


def test_another_extensions_tool_asks(mcp_world: World, model_server: ScriptedModelServer) -> None:
    world = mcp_world
    marker = world.tmp / "danger-ran"
    extension = world.agent_dir / "extensions" / "danger" / "index.ts"
    extension.parent.mkdir(parents=True)
    extension.write_text(
        'import { writeFileSync } from "node:fs";\n'
        "export default function (pi: any) {\n"
        "  pi.registerTool({ name: 'danger_tool', label: 'danger', description: 'does things',\n"
        "    parameters: { type: 'object', properties: { target: { type: 'string' } } },\n"
        f"    async execute() {{ writeFileSync({json.dumps(str(marker))}, 'ran');\n"
        "      return { content: [{ type: 'text', text: 'done' }] }; } });\n"
        "}\n"
    )
    prompt = scenario(model_server, "mcp-extension", ToolCall("danger_tool", {"target": "x"}))
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: False, timeout=120)
    (asked,) = confirms(events)
    assert "danger_tool" in asked["title"]
    assert "the extension" in asked["message"]
    assert not marker.exists()


def test_through_tool_search_the_found_tool_is_judged_too(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world, exposure="deferred")
    victim = world.project / "a" / "keep.txt"
    model_server.add_scenario(
        "mcp-tool-search",
        [
            Turn(tool_calls=(ToolCall("tool_search", {"query": "delete file"}),)),
            Turn(tool_calls=(mcp(world, "delete_file", path=str(victim)),)),
            Turn(text="done"),
        ],
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:mcp-tool-search", lambda _request: False, timeout=120)
    searched = [e for e in tool_ends(events) if e["toolName"] == "tool_search"]
    assert searched and not searched[0]["isError"], searched
    (asked,) = confirms(events)
    assert "mcp__notes__delete_file" in asked["title"]
    assert calls(log) == [] and victim.exists()


def test_pi_mcp_config_is_never_written_by_the_agent(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    planted = json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", "id"]}}})
    user_mcp = world.agent_dir / "mcp.json"
    user_mcp.write_text('{"mcpServers": {}}')
    project_mcp = world.project / ".pi" / "mcp.json"
    prompt = scenario(
        model_server,
        "mcp-config-doors",
        ToolCall("write", {"path": ".pi/mcp.json", "content": planted}),
        ToolCall("write", {"path": str(user_mcp), "content": planted}),
        ToolCall("edit", {"path": str(user_mcp), "oldText": "{}", "newText": planted[14:-1]}),
        ToolCall("bash", {"command": f"mkdir -p .pi && echo '{planted}' > .pi/mcp.json"}),
        ToolCall("bash", {"command": f"echo '{planted}' > {user_mcp}"}),
    )
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: True, timeout=120)  # the operator says yes
    ends = tool_ends(events)
    assert len(ends) == 5
    assert not project_mcp.exists()
    assert user_mcp.read_text() == '{"mcpServers": {}}'
    blocked = [e for e in ends if "runs code or decides trust" in result_text(e)]
    assert len(blocked) >= 3, [result_text(e) for e in ends]


def test_a_stdio_server_run_inside_the_guards_sandbox_cannot_read_the_key(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    """The documented recipe: the server's ``command`` is ``pi-guard sandbox run``, so pi
    starts it inside the same sandbox as the agent's commands (the guard home hidden)."""
    world = mcp_world
    log = world.tmp / "sandboxed-calls.jsonl"
    log.touch()
    pi_guard = str(Path(sys.executable).with_name("pi-guard"))
    args = ["sandbox", "run", "--cwd", str(world.project), "--", sys.executable, str(SERVER), str(log)]  # fmt: skip
    config = {"mcpServers": {"boxed": {"command": pi_guard, "args": args, "exposure": "direct"}}}
    (world.agent_dir / "mcp.json").write_text(json.dumps(config))
    key = world.home / "signing.key"
    hidden = base64.b64encode(str(key).encode()).decode()
    prompt = scenario(
        model_server,
        "mcp-sandboxed-server",
        mcp(world, "get_note", server="boxed", path=str(world.project / "README.md")),
        # a spelling the analysis cannot resolve, so it asks; the operator says yes
        mcp(
            world,
            "exec",
            server="boxed",
            command=f'cat "$(echo {hidden} | base64 -d)"; echo EXIT=$?',
        ),
    )
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: True, timeout=120)  # the operator says yes
    texts = [result_text(end) for end in tool_ends(events)]
    assert any("e2e project" in t for t in texts), texts  # the server works in the sandbox
    assert key.exists()
    secret = key.read_text()
    assert not any(secret.strip() and secret.strip() in t for t in texts)
    assert any("EXIT=1" in t for t in texts), texts  # cat failed: the home is not there


def test_no_and_stop_also_stops_the_scripts_remaining_calls(
    mcp_world: World, model_server: ScriptedModelServer
) -> None:
    world = mcp_world
    log = serve(world, exposure="codemode")
    a, b = world.project / "a" / "keep.txt", world.project / "b" / "keep.txt"
    script = (
        f"await tools.mcp__notes__delete_file({{ path: {json.dumps(str(a))} }}).catch(e => text(String(e)));\n"
        f"await tools.mcp__notes__delete_file({{ path: {json.dumps(str(b))} }}).catch(e => text(String(e)));\n"
        "await tools.mcp__notes__get_note({ path: 'README.md' }).catch(e => text(String(e)));\n"
    )  # fmt: skip
    prompt = scenario(model_server, "mcp-codemode-stop", ToolCall("codemode", {"code": script}))
    with world.rpc() as pi:
        events = pi.prompt(prompt, lambda _request: Pick("stop"), timeout=180)
    assert len(confirms(events)) == 1  # the first asked; the rest were declined unasked
    assert calls(log) == []
    assert a.exists() and b.exists()
    reasons = [r["data"]["reason"] for r in world.audit("confirmation.declined")]
    assert reasons and set(reasons) == {"stopped"}
