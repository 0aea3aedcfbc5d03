"""What is inside the repository, in the real pi (both pinned versions): a script that moves
a tag whose old value nothing else names, rewrites a pack in place, or writes a file that
steers the operator's git (alternates, info/attributes) runs unasked and is held by the
effects review; the operator discards, and the repository is as it was.
"""

from __future__ import annotations

import pytest

from tests.guard.sidecar.test_agent_effects import LOSSES, SCRIPTS, git_state, tagged_repository
from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, effects_dialogs, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


# Every loss in each spelling runs in process, through a sidecar with the real sandbox:
# tests/guard/sidecar/test_agent_effects.py (the tables are its); here one of each spelling.
@pytest.mark.parametrize(
    ("name", "spelling"), [("tag-moved", "python"), ("attributes", "script-file")]
)
def test_a_script_losing_or_steering_history_is_held(
    world: World, model_server: ScriptedModelServer, name: str, spelling: str
) -> None:
    tagged_repository(world.project)
    before = git_state(world.project)
    scenario = f"history-inside-{name}-{spelling}"
    model_server.add_scenario(scenario, turns(bash(SCRIPTS[spelling].format(LOSSES[name]))))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", lambda r: not is_effects_dialog(r), timeout=90)
    assert effects_dialogs(events), [result_text(e) for e in tool_ends(events)]
    assert git_state(world.project) == before
