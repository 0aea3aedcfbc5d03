"""The effects review tells the truth and the audit report shows it, in the real pi (both
pinned versions).

The world's project lives under the machine's temporary directory, beside the guard's home:
``mv notes.md /tmp/`` runs (the agent's ``/tmp`` is the session's own) and the review holds
the untracked file it took away, saying where it went. A command that only creates a
protected file is held as a creation with Apply first. ``audit report`` lists each review
with the command, what was held and who settled it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, confirms, effects_dialogs, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def yes_then_discard(request: Mapping[str, Any]) -> bool:
    return not is_effects_dialog(request)


MOVES = {
    "into": ("mv notes.md /tmp/", "/tmp/notes.md"),
    "target-directory": ("mv -t /tmp notes.md", "/tmp/notes.md"),
    "renamed": ("mv notes.md /tmp/kept.md", "/tmp/kept.md"),
}


@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("name", sorted(MOVES))
def test_a_move_to_tmp_runs_and_the_review_says_where_the_file_went(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    command, where = MOVES[name]
    notes = world.project / "notes.md"
    notes.write_text("my untracked notes\n")
    model_server.add_scenario(f"truth-move-{name}", turns(bash(command)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:truth-move-{name}", yes_then_discard, timeout=120)
    assert world.audit("confirmation.declined") == [], "the move was blocked"
    (held,) = effects_dialogs(events)
    assert f"moved to {where}: notes.md (no repository can restore it" in held["message"]
    assert "deleted notes.md" not in held["message"]
    assert held["options"][0].startswith("Discard")  # applying loses the notes here
    assert notes.read_text() == "my untracked notes\n"  # discarded: still here
    report = json.loads(world.cli("audit", "report", "--json").stdout)
    (row,) = [e for e in report["effects"] if e["held"]]
    assert (row["outcome"], row["by"], row["approver"]) == ("discarded", "operator", "pi-dialog")
    assert row["command"] == command
    assert row["heldPaths"] == ["deleted notes.md (not-in-git)"]


# Spellings the analysis cannot read (so the call's dialog names no file): the review holds
# the protected file they create.
CREATIONS = {
    "base64-sh": "echo cHJpbnRmIEE9MSA+IC5lbnYubG9jYWw= | base64 -d | sh",
    "substitution": "printf A=1 > $(printf .env).local",
}


@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_a_held_creation_is_titled_as_one_with_apply_first(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    model_server.add_scenario(f"truth-create-{name}", turns(bash(CREATIONS[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:truth-create-{name}", lambda _r: True, timeout=120)
    assert len(confirms(events)) <= 1
    dialogs = effects_dialogs(events)
    assert len(dialogs) == 1, [result_text(e) for e in tool_ends(events)]
    held = dialogs[0]
    assert "create files in a protected place" in held["title"]
    assert "created .env.local (a protected path; 1 file, 3 B)" in held["message"]
    assert held["options"][0].startswith("Apply")  # nothing is lost by applying a creation
    assert (world.project / ".env.local").read_text() == "A=1"  # applied
    report = json.loads(world.cli("audit", "report", "--json").stdout)
    (row,) = [e for e in report["effects"] if e["held"]]
    assert (row["outcome"], row["by"]) == ("applied", "operator")
    assert row["evidenceId"]
    assert report["summary"]["effectsByOutcome"].get("applied by operator") == 1
