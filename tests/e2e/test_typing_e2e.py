"""What the operator types while a question is open, in pi's real TUI on a terminal.

pi's select moves on ``j``/``k`` and takes Enter. An operator who was typing a message when
the guard's question opened said "Yes" with "jjj" and Enter. Typed text (and a paste) is the
operator's, never an answer: it is held while the question is open and put back in the
editor after, and the operator is told. The arrow keys still choose. Runs on both pis.
"""

from __future__ import annotations

import pytest

from tools.pi.scripted_model import MODEL_ID, PROVIDER, ScriptedModelServer

from .pi_world import World, bash, turns
from .terminal import Terminal

pytestmark = [pytest.mark.every_pi, pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

YES = "Yes, this call once"
DISCARD = "Discard these changes"
KEPT = "it is back in the editor"
DOWN = "\x1b[B"


def tui(world: World) -> Terminal:
    command = world.pi.command("--provider", PROVIDER, "--model", MODEL_ID, "--no-session")
    return Terminal(command, cwd=world.project, env=world.env())


def started(term: Terminal) -> None:
    term.wait_for("operator-guard on")


def test_letters_and_enter_typed_during_the_dialog_decline_and_stay_in_the_editor(
    world: World,
) -> None:
    with tui(world) as term:
        started(term)
        term.type("scenario:rm-build\r")
        term.wait_for(YES)
        # "jjj" moved pi's select to "Yes, this call once"; Enter took it.
        term.type("jjj hello")
        term.type("\r")
        term.wait_for(KEPT)
        mark = term.mark()
        term.wait_for("done")
        # The held text is in the editor: Enter sends it to the model as the next prompt.
        term.type("\r")
        term.wait_for("unscripted prompt: jjj hello", after=mark)
    assert (world.project / "build" / "keep.txt").exists()
    (declined,) = world.audit("confirmation.declined")
    assert declined["data"]["reason"] == "declined"
    assert world.audit("tool.executed") == []


def test_a_paste_during_the_dialog_is_held_however_many_enters_it_holds(world: World) -> None:
    with tui(world) as term:
        started(term)
        term.type("scenario:rm-build\r")
        term.wait_for(YES)
        term.press("\x1b[200~jjj\rk\rjjj\r\x1b[201~")
        term.press("\x1b")  # Esc: the question is declined
        term.wait_for(KEPT)
        term.wait_for("done")
    assert (world.project / "build" / "keep.txt").exists()
    assert len(world.audit("confirmation.declined")) == 1
    assert world.audit("tool.executed") == []


def test_the_arrow_keys_still_answer(world: World) -> None:
    with tui(world) as term:
        started(term)
        term.type("scenario:rm-build\r")
        term.wait_for(YES)
        for key in (DOWN, DOWN, DOWN, "\r"):
            term.press(key)
        term.wait_for("done")
    assert not (world.project / "build").exists()
    assert len(world.audit("confirmation.recorded")) == 1


def test_letters_typed_during_the_effects_review_do_not_apply_it(
    world: World, model_server: ScriptedModelServer
) -> None:
    (world.project / "drafts").mkdir()
    (world.project / "drafts" / "idea.md").write_text("an idea\n")
    # A project script runs unasked (the analysis reads no deletion in `python3 tidy.py`);
    # what it did is held by the effects review after.
    (world.project / "tidy.py").write_text("import shutil\nshutil.rmtree('drafts')\n")
    command = "python3 tidy.py"
    model_server.add_scenario("typing-effects", turns(bash(command)))
    with tui(world) as term:
        started(term)
        term.type("scenario:typing-effects\r")
        term.wait_for(DISCARD)  # asked nothing before: what it did is held after
        # "j" moved the select to "Apply them"; Enter applied the deletion.
        term.type("j ok")
        term.type("\r")
        term.wait_for(KEPT)
        term.wait_for("done")
    assert (world.project / "drafts" / "idea.md").read_text() == "an idea\n"
    (resolved,) = [r["data"] for r in world.audit("effects.resolved")]
    assert resolved["decision"] == "discarded"
