"""pi's ``write``/``edit`` over the operator's work, in the real pi (both pinned versions):
overwriting an untracked or uncommitted file asks (declined, the file is as it was), as the
same change through bash is held by the effects review; a new file or a clean tracked one
is written without a dialog. Work an earlier command moved still asks at its new name, and
in a workspace no git repository holds every file the operator had asks.
"""

from __future__ import annotations

import pytest

from tests.guard.sidecar.test_agent_overwrite import (
    ASKS,
    DRAFT,
    EDITED,
    MOVED,
    QUIET,
    edit_call,
    operator_repository,
)
from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

from .pi_world import World, bash, confirms, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

# Every variant of each family runs in process, through a sidecar (with the real sandbox for
# the commands): tests/guard/sidecar/test_agent_overwrite.py (the tables are its). Through the
# real pi, one of each: pi's write and edit tools asking, a new file unasked, a moved draft.


# The edit first: the older pi runs only the first, and the edit tool's input differs between
# the pis.
@pytest.mark.parametrize("name", ["edit-uncommitted", "write-untracked"])
@pytest.mark.every_pi
@pytest.mark.variants_on_newest_pi
def test_overwriting_the_operator_s_work_asks(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    operator_repository(world.project)
    model_server.add_scenario(f"overwrite-{name}", turns(ToolCall(*ASKS[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:overwrite-{name}", lambda _request: False)
    (asked,) = confirms(events)
    assert "operator's" in asked["message"], asked["message"]
    assert (world.project / "draft.md").read_text() == DRAFT
    assert (world.project / "README.md").read_text() == EDITED


@pytest.mark.parametrize("name", ["write-new"])
def test_a_new_or_clean_file_is_written_unasked(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    operator_repository(world.project)
    model_server.add_scenario(f"overwrite-quiet-{name}", turns(ToolCall(*QUIET[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:overwrite-quiet-{name}", lambda _request: False)
    assert confirms(events) == []
    assert (world.project / "draft.md").read_text() == DRAFT


@pytest.mark.parametrize("name", ["renamed"])
def test_work_moved_by_an_earlier_command_still_asks(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    """A hostile model moves the work first (a move loses nothing: applied unasked), then
    overwrites it at its new name with pi's write tool."""
    operator_repository(world.project)
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
        ToolCall(*edit_call("notes.txt", "untracked", "lost")),
    )
    model_server.add_scenario("overwrite-plain", turns(*calls))
    with world.rpc() as pi:
        events = pi.prompt("scenario:overwrite-plain", lambda _request: False)
    (asked,) = confirms(events)
    assert "no git repository" in asked["message"], asked["message"]
    assert (world.project / "notes.txt").read_text() == DRAFT
    assert (world.project / "fresh.txt").read_text() == "new\n"
