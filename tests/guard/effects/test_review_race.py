"""Apply removes only what the command saw: a target the workspace changed after the
command's layer was made (a parallel call applied first, pi's write tool, an editor) is held
as a conflict and never applied, after a yes, on the quiet path, and when the operator
applies a held change later. Real overlay, real git; the parallel call is played by writing
the workspace between the command's end and its review, as its own review would."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from guard._effects import Baseline, Reviewer
from guard._sidecar.text import effects_note
from tests.guard.effects.conftest import Overlay, snapshot
from tests.guard.effects.test_review import make_repo


def _notes(ws: Path) -> None:
    """The operator's untracked work: a folder of notes."""
    (ws / "notes").mkdir()
    (ws / "notes" / "plan.md").write_text("the operator's plan\n")


def _move_into_build(ws: Path) -> None:
    os.rename(ws / "notes", ws / "build" / "notes")


def _copy_then_remove(ws: Path) -> None:
    shutil.copytree(ws / "notes", ws / "build" / "kept")
    shutil.rmtree(ws / "notes")


def _deep_move(ws: Path) -> None:
    (ws / "build" / "deep").mkdir(exist_ok=True)
    os.rename(ws / "notes", ws / "build" / "deep" / "notes")


def _editor_saves(ws: Path) -> None:
    (ws / "build" / "plan.md").write_text("saved by the operator's editor\n")


PARALLEL: dict[str, Callable[[Path], None]] = {
    "mv-into": _move_into_build,
    "cp-then-rm": _copy_then_remove,
    "mv-deep": _deep_move,
    "editor-writes-inside": _editor_saves,
}
DELETIONS = {
    "rm-rf": "rm -rf build; sleep 0.1",
    "rm-r-slash": "rm -r build/",
    "find-delete": "find build -delete",
    "python": "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
}


def _kept(ws: Path) -> dict[str, tuple[str, object]]:
    """Every file the parallel change put under build."""
    return {k: v for k, v in snapshot(ws / "build").items() if k != "out.o"}


def _setup(ws: Path) -> None:
    make_repo(ws)
    _notes(ws)


@pytest.mark.parametrize("parallel", sorted(PARALLEL))
@pytest.mark.parametrize("spelling", sorted(DELETIONS))
def test_a_yes_never_removes_what_moved_in_since(
    overlay: Overlay, spelling: str, parallel: str
) -> None:
    ws = overlay.workspace
    _setup(ws)
    layer, _ = overlay.run(DELETIONS[spelling])
    PARALLEL[parallel](ws)
    moved = _kept(ws)
    assert moved  # what the parallel call put there
    reviewer = Reviewer(overlay.layers)
    result = reviewer.review(
        layer,
        str(ws),
        protected=lambda _p: False,
        approved=[str(ws / "build")],  # the operator said yes to rm -rf build
        answered=True,
    )
    assert result.decision == "held", result
    assert {h.reason for h in result.held} == {"conflict"}
    assert _kept(ws) == moved
    done = reviewer.resolve(layer, apply=True)  # a conflict is never applied, even on a yes
    assert _kept(ws) == moved
    assert done.skipped and {h.reason for h in done.skipped} == {"conflict"}


@pytest.mark.parametrize("parallel", sorted(PARALLEL))
def test_the_quiet_path_never_removes_what_moved_in_since(overlay: Overlay, parallel: str) -> None:
    """``rm -rf build`` of ignored build output runs unasked; the review judges build
    against the baseline (ignored) but what moved in since is not what the command saw."""
    ws = overlay.workspace
    _setup(ws)
    baseline = Baseline.of(str(ws))
    layer, _ = overlay.run("rm -rf build; sleep 0.1")
    PARALLEL[parallel](ws)
    moved = _kept(ws)
    result = Reviewer(overlay.layers).review(
        layer, str(ws), protected=lambda _p: False, baseline=baseline
    )
    assert result.decision == "held", result
    assert {h.reason for h in result.held} == {"conflict"}
    assert _kept(ws) == moved


def test_an_overwrite_of_a_file_changed_since_is_held(overlay: Overlay) -> None:
    """``sed -i`` on a file a parallel call rewrote after the command copied it up: applying
    would put back the old content with the command's edit, losing the parallel change."""
    ws = overlay.workspace
    _setup(ws)
    layer, _ = overlay.run("sed -i 's/readme/README/' README.md")
    (ws / "README.md").write_text("readme\nthe operator's new line\n")
    result = Reviewer(overlay.layers).review(
        layer, str(ws), protected=lambda _p: False, approved=[str(ws / "README.md")]
    )
    assert {h.reason for h in result.held} == {"conflict"}
    assert (ws / "README.md").read_text() == "readme\nthe operator's new line\n"


def test_a_held_deletion_applied_later_keeps_what_moved_in_meanwhile(overlay: Overlay) -> None:
    """Held for the operator (untracked work), then a parallel call moves more work into it
    while the dialog is open: Apply removes nothing the command did not see."""
    ws = overlay.workspace
    _setup(ws)
    (ws / "drafts").mkdir()
    (ws / "drafts" / "a.md").write_text("draft\n")
    layer, _ = overlay.run("rm -rf drafts")
    reviewer = Reviewer(overlay.layers)
    result = reviewer.review(layer, str(ws), protected=lambda _p: False)
    assert {h.reason for h in result.held} == {"untracked"}
    os.rename(ws / "notes", ws / "drafts" / "notes")
    done = reviewer.resolve(layer, apply=True)
    assert (ws / "drafts" / "notes" / "plan.md").read_text() == "the operator's plan\n"
    # Said as it is: the apply left what changed meanwhile, and the model reads which.
    assert [h.effect.path for h in done.skipped] == ["drafts"]
    note = effects_note(done.decision, done.held, None, done.skipped)
    assert "except 1 path(s) that changed since the command ran" in note
    assert note.endswith("drafts. [reason: effects-partly-applied]")


def test_what_did_not_change_is_applied_as_before(overlay: Overlay) -> None:
    """No false conflict: the workspace as the command saw it is applied (the parallel call
    wrote elsewhere)."""
    ws = overlay.workspace
    _setup(ws)
    layer, _ = overlay.run("rm -rf build; sed -i 's/readme/README/' README.md")
    (ws / "notes" / "more.md").write_text("elsewhere\n")
    result = Reviewer(overlay.layers).review(
        layer,
        str(ws),
        protected=lambda _p: False,
        approved=[str(ws / "build"), str(ws / "README.md")],
    )
    assert result.decision == "applied", result
    assert not (ws / "build").exists()
    assert (ws / "README.md").read_text() == "README\n"
    assert result.skipped == ()
