"""Every variant of tests/e2e/test_race_e2e.py through a sidecar in process with the real
sandbox (tests/guard/sidecar/agent.py): ``rm -rf build; sleep 3`` (asked and said yes to, or
unasked as ignored build output) runs while a parallel call moves the operator's untracked
``notes/`` into ``build/``; the operator applies everything held, and the notes are still
there: what changed under the first command after its layer was made is held as a conflict,
never applied. The end-to-end file keeps representatives and takes its table from here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.effects.test_review import git
from tests.guard.sidecar.agent import Outcome, agent, world_project

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

PLAN = "the operator's plan\n"
DELETES = "rm -rf build; sleep 3"
MOVES = {
    "mv": "sleep 1; mv notes build/",
    "cp-then-rm": "sleep 1; cp -r notes build/ && rm -rf notes",
    # a directory renamed on the overlay is copied (EXDEV), as mv does by itself
    "node": "sleep 1; node --eval=\"const fs = require('fs'); fs.cpSync('notes', 'build/notes',"
    " {recursive: true}); fs.rmSync('notes', {recursive: true})\"",
}


def race_repository(project: Path, *, ignored: bool) -> None:
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


@pytest.mark.parametrize("ignored", [True, False], ids=["unasked", "yes"])
@pytest.mark.parametrize("name", sorted(MOVES))
def test_a_parallel_move_into_a_deleted_folder_is_never_deleted(
    tmp_path: Path, name: str, ignored: bool
) -> None:
    project = world_project(tmp_path.resolve() / "project")
    race_repository(project, ignored=ignored)
    with agent(tmp_path / "home", project) as session:
        deleting = session.start(DELETES)
        assert not isinstance(deleting, Outcome), deleting
        moved = session.bash(MOVES[name], apply=True)
        deleted = session.finish(deleting, apply=True)
    assert moved.review in ("applied", "held"), moved
    assert deleted.asked is not ignored, deleted
    assert (project / "build" / "notes" / "plan.md").read_text() == PLAN
    assert deleted.held and "changed under the command" in deleted.held_dialog, deleted
