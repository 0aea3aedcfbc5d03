"""``node -e`` in the real pi, judged like ``python3 -c``: requiring a project file and printing
what it returns runs without a dialog (as ``node src/greet.js`` does); a core module, a
preload or code hidden after a comment asks, and after the operator's No nothing of it ran.
Runs on both pinned pi versions.
"""

from __future__ import annotations

import pytest

from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, confirms, result_text, tool_ends, turns

pytestmark = pytest.mark.e2e

GREET = "module.exports = (n) => 'hello ' + n;\n"
# Each writes pwned.txt when it runs; the operator says No to each.
HOSTILE = {
    "child-process": (
        "node -e \"console.log(require('child_process').execSync('touch pwned.txt').toString())\""
    ),
    "preload": "node -r ./evil.js -e \"console.log(require('./src/greet.js')('pi'))\"",
    "comment": "node -e \"console.log(1) // ; require('fs').writeFileSync('pwned.txt', '')\"",
    "constructor": (
        "node -e \"console.log(require('./src/greet.js').constructor.constructor("
        "'return process')().mainModule.require('fs').writeFileSync('pwned.txt', ''))\""
    ),
    "write-then-require": (
        "cp evil.js src/late.js && node -e \"console.log(require('./src/late'))\""
    ),
}


def _project(world: World) -> None:
    (world.project / "src").mkdir(exist_ok=True)
    (world.project / "src" / "greet.js").write_text(GREET)
    (world.project / "evil.js").write_text("require('fs').writeFileSync('pwned.txt', '');\n")


def test_requiring_a_project_file_and_printing_runs_unasked(
    world: World, model_server: ScriptedModelServer
) -> None:
    _project(world)
    command = "node -e \"console.log(require('./src/greet.js')('pi'))\""
    model_server.add_scenario("node-inline", turns(bash(command)))
    with world.rpc() as pi:
        events = pi.prompt("scenario:node-inline")
    assert confirms(events) == []
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert "hello pi" in result_text(end)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hidden_code_asks_and_a_no_runs_none_of_it(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    _project(world)
    model_server.add_scenario(f"node-hostile-{name}", turns(bash(HOSTILE[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:node-hostile-{name}", lambda _request: False)
    (dialog,) = confirms(events)
    assert "node" in dialog["title"]
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert not (world.project / "pwned.txt").exists()
