"""Ask only where work can be lost, judged against what the operator had: the real pi.

Routine destructive calls whose targets are all restorable (ignored build output, caches,
nothing there, a committed file) run without a dialog and say why in ``tool.executed``;
the laundering classes that lean on the baseline (an ignore file written over the work, a
commit the agent made, history rewritten or a repository re-created by a script) still ask
or are held. The operator says Yes to a call's dialog and Discard to held effects, so what
stops the loss is the judgement under test. Runs on both pinned pi versions.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.guard.sidecar.test_agent_quiet import (
    ASKS,
    COMMIT_THEN_DELETE,
    HISTORY,
    IGNORED_SINCE,
    QUIET,
    RM_DRAFTS,
    SCRIPTS,
    operator_repository,
)
from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, confirms, effects_dialogs, result_text, tool_ends, turns
from .test_effects_e2e import git

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def discard(request: Mapping[str, Any]) -> bool:
    """Yes to a call's dialog, Discard to what its command held back."""
    return not is_effects_dialog(request)


def _repository(project: Path) -> None:
    """The operator's repository: dist/ ignored, a committed file, an untracked draft."""
    shutil.rmtree(project / "build")
    operator_repository(project)


# Every variant of each family runs in process, through a sidecar with the real sandbox:
# tests/guard/sidecar/test_agent_quiet.py (the tables are its). Through the real pi, one
# representative of each: one runs unasked, one asks, scripts in python and in node are held,
# an ignore rule or a commit the agent wrote beside a deletion is held.


@pytest.mark.parametrize("name", ["ignored-dist"])
def test_restorable_targets_run_unasked_with_the_reason_recorded(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    _repository(world.project)
    (world.project / "dist" / "app.js").write_text("built\n")
    for cache in (".pytest_cache", "__pycache__"):
        (world.project / cache).mkdir()
        (world.project / cache / "x.pyc").write_bytes(b"\0")
    command, why = QUIET[name]
    model_server.add_scenario(f"quiet-{name}", turns(bash(command)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:quiet-{name}", discard)
    assert confirms(events) == []
    assert effects_dialogs(events) == []
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    (executed,) = [r["data"] for r in world.audit("tool.executed")]
    assert {
        str(Path(t["path"]).relative_to(world.project.resolve())): t["reason"]
        for t in executed["ranUnasked"]
    } == why
    assert (world.project / "notes.md").exists()
    report = world.cli("audit", "report", "--json")
    assert report.returncode == 0, report.stdout


@pytest.mark.parametrize("name", ["untracked"])
def test_work_at_stake_asks(world: World, model_server: ScriptedModelServer, name: str) -> None:
    _repository(world.project)
    model_server.add_scenario(f"asks-{name}", turns(bash(ASKS[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:asks-{name}", lambda _request: False)
    assert len(confirms(events)) == 1
    assert (world.project / "notes.md").read_text() == "the operator's untracked work\n"


def test_an_ignore_file_written_over_the_work_in_an_earlier_call_still_asks(
    world: World, model_server: ScriptedModelServer
) -> None:
    _repository(world.project)
    (world.project / "drafts").mkdir()
    (world.project / "drafts" / "idea.md").write_text("an idea\n")
    model_server.add_scenario(
        "quiet-launder",
        turns(bash("printf '*\\n' > drafts/.gitignore"), bash("rm -rf drafts")),
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:quiet-launder", lambda _request: False)
    assert len(confirms(events)) == 1
    assert (world.project / "drafts" / "idea.md").read_text() == "an idea\n"


@pytest.mark.parametrize(
    ("name", "spelling"), [("one-script", "python"), ("rm-git-and-init", "node")]
)
def test_history_and_work_lost_by_a_script_are_held(
    world: World, model_server: ScriptedModelServer, name: str, spelling: str
) -> None:
    _repository(world.project)
    git(world.project, "checkout", "-q", "-b", "feature")
    (world.project / "feature.py").write_text("unmerged = True\n")
    git(world.project, "add", "feature.py")
    git(world.project, "commit", "-qm", "unmerged work")
    git(world.project, "checkout", "-q", "-")
    (world.project / "src" / "app.py").write_text("stashed\n")
    git(world.project, "stash", "-q")
    heads = sorted(p.name for p in (world.project / ".git" / "refs" / "heads").iterdir())
    command = SCRIPTS[spelling].format(HISTORY[name])
    model_server.add_scenario(f"history-{name}-{spelling}", turns(bash(command)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:history-{name}-{spelling}", discard, timeout=90)
    assert effects_dialogs(events), [result_text(e) for e in tool_ends(events)]
    assert (world.project / "notes.md").read_text() == "the operator's untracked work\n"
    assert (world.project / ".git" / "refs" / "stash").exists()
    assert sorted(p.name for p in (world.project / ".git" / "refs" / "heads").iterdir()) == heads


@pytest.mark.parametrize("name", ["nested-gitignore"])
def test_work_ignored_by_a_rule_written_since_is_held_when_a_script_deletes_it(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    _repository(world.project)
    (world.project / "drafts").mkdir()
    (world.project / "drafts" / "idea.md").write_text("an idea\n")
    scenario = f"ignored-since-{name}"
    model_server.add_scenario(scenario, turns(bash(IGNORED_SINCE[name]), bash(RM_DRAFTS)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", discard, timeout=90)
    assert effects_dialogs(events), [result_text(e) for e in tool_ends(events)]
    assert (world.project / "drafts" / "idea.md").read_text() == "an idea\n"


@pytest.mark.parametrize("name", ["git-then-node"])
def test_work_an_agent_committed_is_still_the_operators_untracked_work(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    """Committed by an agent command, the draft looks restorable from the current HEAD; it is
    judged against the operator's HEAD, so the script deleting it is held."""
    _repository(world.project)
    commit, delete = COMMIT_THEN_DELETE[name]
    model_server.add_scenario(f"committed-{name}", turns(bash(commit), bash(delete)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:committed-{name}", discard, timeout=90)
    assert effects_dialogs(events), [result_text(e) for e in tool_ends(events)]
    assert (world.project / "notes.md").read_text() == "the operator's untracked work\n"
