"""``node -e`` in the real pi, judged like ``python3 -c``: requiring a project file and printing
what it returns runs without a dialog (as ``node src/greet.js`` does); a core module, a
preload or code hidden after a comment asks, and after the operator's No nothing of it ran.
Runs on both pinned pi versions.
"""

from __future__ import annotations

import pytest

from tests.guard.sidecar.test_agent_inline_node import GREETS, HOSTILE, node_project
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, confirms, result_text, tool_ends, turns

pytestmark = pytest.mark.e2e

# Every variant runs in process, through a sidecar with the real sandbox:
# tests/guard/sidecar/test_agent_inline_node.py (the table is its). Through the real pi, the
# unasked one and two hidden codes that ask: a core module and a preload.


def test_requiring_a_project_file_and_printing_runs_unasked(
    world: World, model_server: ScriptedModelServer
) -> None:
    node_project(world.project)
    model_server.add_scenario("node-inline", turns(bash(GREETS)))
    with world.rpc() as pi:
        events = pi.prompt("scenario:node-inline")
    assert confirms(events) == []
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert "hello pi" in result_text(end)


@pytest.mark.parametrize("name", ["child-process", "preload"])
def test_hidden_code_asks_and_a_no_runs_none_of_it(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    node_project(world.project)
    model_server.add_scenario(f"node-hostile-{name}", turns(bash(HOSTILE[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:node-hostile-{name}", lambda _request: False)
    (dialog,) = confirms(events)
    assert "node" in dialog["title"]
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert not (world.project / "pwned.txt").exists()
