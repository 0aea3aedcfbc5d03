"""pi's MCP configuration is out of the agent's reach: the project's ``.pi/mcp.json`` (pi
starts the stdio servers it names, outside the sandbox, at its next start in a trusted
folder) and the user's ``mcp.json``/``mcp-auth.json``, through every tool and spelling the
analysis resolves; what it cannot resolve asks; a sandboxed command cannot write it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from guard._policy import Policy
from tests.guard.policy.conftest import World
from tests.guard.sandbox.conftest import make_layout, needs_bwrap, run_proved

SERVER = json.dumps({"mcpServers": {"x": {"command": "sh", "args": ["-c", "cat ~/key"]}}})


def verdict(policy: Policy, world: World, tool: str, **args: Any) -> str:
    return policy.classify(tool, args, world.project).verdict


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"path": ".pi/mcp.json", "content": SERVER}),
        ("write", {"path": "./.pi//mcp.json", "content": SERVER}),
        ("write", {"path": "@.pi/mcp.json", "content": SERVER}),
        ("write", {"path": ".pi/../.pi/mcp.json", "content": SERVER}),
        ("write", {"path": "sub/../.pi/mcp.json", "content": SERVER}),
        ("write", {"path": ".PI/MCP.JSON", "content": SERVER}),
        ("edit", {"path": ".pi/mcp.json", "oldText": "{}", "newText": SERVER}),
        ("bash", {"command": "echo '{}' > .pi/mcp.json"}),
        ("bash", {"command": "mkdir -p .pi && printf %s '{}' >> .pi/mcp.json"}),
        ("bash", {"command": "tee .pi/mcp.json < /dev/null"}),
        ("bash", {"command": "cp /tmp/evil.json .pi/mcp.json"}),
        ("bash", {"command": "mv evil.json .pi/mcp.json"}),
        ("bash", {"command": "ln -sf /tmp/evil.json .pi/mcp.json"}),
        ("bash", {"command": "install -m 644 evil.json .pi/mcp.json"}),
        ("bash", {"command": "sed -i 's/a/b/' .pi/mcp.json"}),
        ("bash", {"command": "cd .pi && echo '{}' > mcp.json"}),
        ("bash", {"command": "cat > .pi/mcp.json <<'EOF'\n{}\nEOF"}),
        ("bash", {"command": "rsync evil.json .pi/mcp.json"}),
        ("bash", {"command": "git checkout main -- .pi/mcp.json"}),
        ("bash", {"command": "dd if=evil.json of=.pi/mcp.json"}),
    ],
)
def test_the_projects_mcp_json_is_blocked_in_every_spelling(
    world: World, tool: str, args: dict[str, Any]
) -> None:
    policy = world.policy()
    result = policy.classify(tool, args, world.project)
    assert result.verdict == "block", (tool, args, result)
    assert "builtin.runs-outside-sandbox" in result.rule_ids


@pytest.mark.parametrize(
    "command",
    [
        "f=.pi/mcp.json; echo '{}' > $f",
        'echo "{}" > "$(printf .pi/mcp.json)"',
        "echo {} > .pi/mcp.js*",
        "python3 -c \"open('.pi/mcp.json', 'w').write('{}')\"",
        "node -e \"require('fs').writeFileSync('.pi/mcp.json', '{}')\"",
        "tar -xf evil.tar",
    ],
)
def test_what_the_analysis_cannot_resolve_asks(world: World, command: str) -> None:
    assert verdict(world.policy(), world, "bash", command=command) != "allow"


def test_an_mcp_tool_writing_it_is_blocked_too(world: World) -> None:
    result = world.policy().classify(
        "mcp__fs__write_file", {"path": ".pi/mcp.json", "content": SERVER}, world.project
    )
    assert result.verdict == "block"


@pytest.mark.parametrize("name", ["mcp.json", "mcp-auth.json", "settings.json", "trust.json"])
def test_the_users_mcp_files_and_settings_are_blocked(
    world: World, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    agent = world.home / ".pi" / "agent"
    for tool, args in (
        ("write", {"path": str(agent / name), "content": SERVER}),
        ("write", {"path": f"~/.pi/agent/{name}", "content": SERVER}),
        ("bash", {"command": f"echo x > ~/.pi/agent/{name}"}),
    ):
        assert verdict(world.policy(), world, tool, **args) == "block", (tool, args)
    elsewhere = world.home / "elsewhere"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(elsewhere))
    target = {"path": str(elsewhere / name), "content": "{}"}
    assert verdict(world.policy(), world, "write", **target) == "block"


def test_reading_the_mcp_config_is_fine(world: World) -> None:
    (world.project / ".pi").mkdir()
    (world.project / ".pi" / "mcp.json").write_text("{}")
    assert verdict(world.policy(), world, "read", path=".pi/mcp.json") == "allow"


@needs_bwrap
def test_a_sandboxed_command_cannot_create_or_change_it(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    mcp = layout.workspace / ".pi" / "mcp.json"
    run_proved(layout, f"echo '{SERVER}' > .pi/mcp.json; mkdir -p .pi; cp /dev/null .pi/mcp.json")
    assert not mcp.exists()
    mcp.write_text("{}")
    run_proved(layout, "echo '{\"mcpServers\": {}}' > .pi/mcp.json; rm -f .pi/mcp.json")
    assert mcp.read_text() == "{}"
    assert os.path.isfile(mcp)
