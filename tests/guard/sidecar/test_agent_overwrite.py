"""Every variant of tests/e2e/test_overwrite_e2e.py through a sidecar in process, with the
real sandbox where the agent runs a command (tests/guard/sidecar/agent.py): pi's write/edit
over the operator's untracked or uncommitted work asks, a new or clean file does not, and
work an earlier command moved still asks at its new name. The end-to-end file keeps
representatives and takes its tables from here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guard.effects.test_review import git
from tests.guard.sidecar.agent import agent, world_project

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

DRAFT = "the operator's untracked draft\n"
EDITED = "an edit the operator has not committed\n"


def operator_repository(project: Path) -> None:
    (project / "app.py").write_text("print('app')\n")
    (project / "README.md").write_text("readme\n")
    git(project, "init", "-q")
    git(project, "add", "app.py", "README.md")
    git(project, "commit", "-qm", "start")
    (project / "draft.md").write_text(DRAFT)
    (project / "README.md").write_text(EDITED)


def edit_call(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return ("edit", {"path": path, "oldText": old, "newText": new})


ASKS = {
    "write-untracked": ("write", {"path": "draft.md", "content": "gone\n"}),
    "write-uncommitted": ("write", {"path": "README.md", "content": "gone\n"}),
    "edit-untracked": edit_call("draft.md", "untracked", "lost"),
    "edit-uncommitted": edit_call("README.md", "operator", "agent"),
}
QUIET = {
    "write-new": ("write", {"path": "docs/new.md", "content": "new\n"}),
    "write-clean": ("write", {"path": "app.py", "content": "print('main')\n"}),
    "edit-clean": edit_call("app.py", "app", "main"),
}
MOVED = {
    "renamed": ("mv draft.md kept.md", "kept.md"),
    "into-a-folder": ("mkdir -p old && mv draft.md old/", "old/draft.md"),
    "renamed-hidden": ("mv draft.md .draft.swp", ".draft.swp"),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = world_project(tmp_path.resolve() / "project")
    operator_repository(project)
    return project


@pytest.mark.parametrize("name", sorted(ASKS))
def test_overwriting_the_operator_s_work_asks(tmp_path: Path, project: Path, name: str) -> None:
    with agent(tmp_path / "home", project) as session:
        reply = session.tool(*ASKS[name])
    assert reply["action"] == "confirm", reply
    assert "operator's" in reply["dialog"]["message"]
    assert (project / "draft.md").read_text() == DRAFT
    assert (project / "README.md").read_text() == EDITED


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_new_or_clean_file_is_written_unasked(tmp_path: Path, project: Path, name: str) -> None:
    with agent(tmp_path / "home", project) as session:
        assert session.tool(*QUIET[name])["action"] == "allow"


@pytest.mark.parametrize("name", sorted(MOVED))
def test_work_moved_by_an_earlier_command_still_asks(
    tmp_path: Path, project: Path, name: str
) -> None:
    command, moved_to = MOVED[name]
    with agent(tmp_path / "home", project) as session:
        moved = session.bash(command)
        assert (moved.asked, moved.review) == (False, "applied"), moved
        reply = session.tool("write", {"path": moved_to, "content": "gone\n"})
    assert reply["action"] == "confirm", reply
    assert "operator's" in reply["dialog"]["message"]
    assert (project / moved_to).read_text() == DRAFT
