"""Two parallel calls in the real pi (both pinned versions): the review applies only what a
command saw. ``rm -rf build; sleep 3`` (asked and said yes to, or unasked as ignored build
output) runs beside a call that moves the operator's untracked ``notes/`` into ``build/``
first; the operator says yes to everything and applies everything held, and the notes are
still there: what changed under the first command after its layer was made is held as a
conflict, which is never applied.
"""

from __future__ import annotations

import pytest

from tests.guard.sidecar.test_agent_race import DELETES, MOVES, PLAN, race_repository
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, effects_dialogs, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


# Every move on each path runs in process, through a sidecar with the real sandbox and the two
# commands overlapping: tests/guard/sidecar/test_agent_race.py (the table is its). Through the
# real pi, whose parallel tool calls make the race: mv on the quiet path, node after a yes.
@pytest.mark.parametrize(
    ("name", "ignored"), [("mv", True), ("node", False)], ids=["mv-unasked", "node-yes"]
)
def test_a_parallel_move_into_a_deleted_folder_is_never_deleted(
    world: World, model_server: ScriptedModelServer, name: str, ignored: bool
) -> None:
    race_repository(world.project, ignored=ignored)
    scenario = f"race-{name}-{'unasked' if ignored else 'yes'}"
    model_server.add_scenario(scenario, turns(bash(DELETES), bash(MOVES[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", lambda _request: True, timeout=120)
    texts = [result_text(e) for e in tool_ends(events)]
    assert (world.project / "build" / "notes" / "plan.md").read_text() == PLAN, texts
    held = [d for d in effects_dialogs(events) if "changed under the command" in str(d)]
    assert held, texts  # the deletion was held as a conflict, and not applied on Apply
