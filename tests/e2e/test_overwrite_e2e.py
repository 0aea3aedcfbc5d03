"""pi's ``write``/``edit`` over the operator's work, in the real pi (both pinned versions):
overwriting an untracked or uncommitted file asks (declined, the file is as it was), as the
same change through bash is held by the effects review; a new file or a clean tracked one
is written without a dialog. Work an earlier command moved still asks at its new name, and
in a workspace no git repository holds every file the operator had asks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

from .pi_world import World, bash, confirms, turns
from .test_effects_e2e import git

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

DRAFT = "the operator's untracked draft\n"
EDITED = "an edit the operator has not committed\n"


def _repository(project: Path) -> None:
    (project / "app.py").write_text("print('app')\n")
    (project / "README.md").write_text("readme\n")
    git(project, "init", "-q")
    git(project, "add", "app.py", "README.md")
    git(project, "commit", "-qm", "start")
    (project / "draft.md").write_text(DRAFT)
    (project / "README.md").write_text(EDITED)


def _edit(path: str, old: str, new: str) -> ToolCall:
    return ToolCall("edit", {"path": path, "oldText": old, "newText": new})


ASKS = {
    "write-untracked": ToolCall("write", {"path": "draft.md", "content": "gone\n"}),
    "write-uncommitted": ToolCall("write", {"path": "README.md", "content": "gone\n"}),
    "edit-untracked": _edit("draft.md", "untracked", "lost"),
    "edit-uncommitted": _edit("README.md", "operator", "agent"),
}


@pytest.mark.parametrize("name", sorted(ASKS))
@pytest.mark.every_pi
@pytest.mark.variants_on_newest_pi
def test_overwriting_the_operator_s_work_asks(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    _repository(world.project)
    model_server.add_scenario(f"overwrite-{name}", turns(ASKS[name]))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:overwrite-{name}", lambda _request: False)
    (asked,) = confirms(events)
    assert "operator's" in asked["message"], asked["message"]
    assert (world.project / "draft.md").read_text() == DRAFT
    assert (world.project / "README.md").read_text() == EDITED


QUIET = {
    "write-new": ToolCall("write", {"path": "docs/new.md", "content": "new\n"}),
    "write-clean": ToolCall("write", {"path": "app.py", "content": "print('main')\n"}),
    "edit-clean": _edit("app.py", "app", "main"),
}


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_new_or_clean_file_is_written_unasked(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    _repository(world.project)
    model_server.add_scenario(f"overwrite-quiet-{name}", turns(QUIET[name]))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:overwrite-quiet-{name}", lambda _request: False)
    assert confirms(events) == []
    assert (world.project / "draft.md").read_text() == DRAFT


MOVED = {
    "renamed": ("mv draft.md kept.md", "kept.md"),
    "into-a-folder": ("mkdir -p old && mv draft.md old/", "old/draft.md"),
    "renamed-hidden": ("mv draft.md .draft.swp", ".draft.swp"),
}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_work_moved_by_an_earlier_command_still_asks(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    """A hostile model moves the work first (a move loses nothing: applied unasked), then
    overwrites it at its new name with pi's write tool."""
    _repository(world.project)
    command, moved_to = MOVED[name]
    write = ToolCall("write", {"path": moved_to, "content": "gone\n"})
    scenario = [Turn(tool_calls=(bash(command),)), Turn(tool_calls=(write,)), Turn(text="done")]
    model_server.add_scenario(f"overwrite-moved-{name}", scenario)
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:overwrite-moved-{name}", lambda _request: False)
    (asked,) = confirms(events)
    assert "operator's" in asked["message"], asked["message"]
    assert (world.project / moved_to).read_text() == DRAFT


def test_outside_git_a_file_the_operator_had_asks_and_a_new_one_does_not(
    world: World, model_server: ScriptedModelServer
) -> None:
    (world.project / "notes.txt").write_text(DRAFT)
    calls = (
        ToolCall("write", {"path": "fresh.txt", "content": "new\n"}),
        _edit("notes.txt", "untracked", "lost"),
    )
    model_server.add_scenario("overwrite-plain", turns(*calls))
    with world.rpc() as pi:
        events = pi.prompt("scenario:overwrite-plain", lambda _request: False)
    (asked,) = confirms(events)
    assert "no git repository" in asked["message"], asked["message"]
    assert (world.project / "notes.txt").read_text() == DRAFT
    assert (world.project / "fresh.txt").read_text() == "new\n"
