"""Two parallel calls in the real pi (both pinned versions): the review applies only what a
command saw. ``rm -rf build; sleep 3`` (asked and said yes to, or unasked as ignored build
output) runs beside a call that moves the operator's untracked ``notes/`` into ``build/``
first; the operator says yes to everything and applies everything held, and the notes are
still there: what changed under the first command after its layer was made is held as a
conflict, which is never applied.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, effects_dialogs, result_text, tool_ends, turns
from .test_effects_e2e import git

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

PLAN = "the operator's plan\n"


def _repository(project: Path, *, ignored: bool) -> None:
    """build/ holds output (ignored, or with an untracked file so that rm -rf asks);
    notes/ is the operator's untracked work."""
    (project / ".gitignore").write_text("build/\n" if ignored else "")
    (project / "build").mkdir(exist_ok=True)
    (project / "build" / "out.o").write_text("object\n")
    git(project, "init", "-q")
    git(project, "add", ".gitignore")
    git(project, "commit", "-qm", "start")
    (project / "notes").mkdir()
    (project / "notes" / "plan.md").write_text(PLAN)


MOVES = {
    "mv": "sleep 1; mv notes build/",
    "cp-then-rm": "sleep 1; cp -r notes build/ && rm -rf notes",
    # a directory renamed on the overlay is copied (EXDEV), as mv does by itself
    "node": "sleep 1; node --eval=\"const fs = require('fs'); fs.cpSync('notes', 'build/notes',"
    " {recursive: true}); fs.rmSync('notes', {recursive: true})\"",
}


@pytest.mark.parametrize("ignored", [True, False], ids=["unasked", "yes"])
@pytest.mark.parametrize("name", sorted(MOVES))
def test_a_parallel_move_into_a_deleted_folder_is_never_deleted(
    world: World, model_server: ScriptedModelServer, name: str, ignored: bool
) -> None:
    _repository(world.project, ignored=ignored)
    scenario = f"race-{name}-{'unasked' if ignored else 'yes'}"
    model_server.add_scenario(scenario, turns(bash("rm -rf build; sleep 3"), bash(MOVES[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", lambda _request: True, timeout=120)
    texts = [result_text(e) for e in tool_ends(events)]
    assert (world.project / "build" / "notes" / "plan.md").read_text() == PLAN, texts
    held = [d for d in effects_dialogs(events) if "changed under the command" in str(d)]
    assert held, texts  # the deletion was held as a conflict, and not applied on Apply
