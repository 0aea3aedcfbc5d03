"""A held creation, read from a real layer, reaches the operator as a creation with its real
file count and size, Apply first; a held deletion keeps Discard first."""

from __future__ import annotations

import os

import pytest

from guard._effects import Reviewer
from guard._sidecar.text import effects_dialog
from tests.guard.effects.conftest import Overlay


def _protected(path: str) -> bool:
    return os.path.basename(path).startswith(".env")


@pytest.mark.parametrize(
    "script",
    [
        # a new directory holding a protected file: one effect, every file counted
        "mkdir conf && for i in $(seq 1 240); do printf 0123456789 > conf/f$i; done"
        " && printf SECRET=1 > conf/.env",
        "mkdir -p conf/deep && seq 1 240 | while read i; do printf 0123456789 > conf/deep/f$i;"
        " done && printf SECRET=1 > conf/.env.local",
    ],
    ids=["flat", "nested"],
)
def test_a_held_creation_counts_every_file_and_byte(overlay: Overlay, script: str) -> None:
    layer, _ = overlay.run(script)
    review = Reviewer(overlay.layers).review(layer, str(overlay.workspace), protected=_protected)
    assert review.decision == "held"
    (hold,) = review.held
    assert (hold.effect.kind, hold.files, hold.bytes) == ("created", 241, 2408)
    dialog = effects_dialog(review.held, script, "")
    assert "wants to create files in a protected place" in dialog.title
    assert "1 creation (241 files, 2.4 KiB)" in dialog.message
    assert "created conf (a protected path; 241 files, 2.4 KiB)" in dialog.message
    assert dialog.preselect == "apply"


def test_a_held_deletion_keeps_discard_first(overlay: Overlay) -> None:
    (overlay.workspace / "notes.md").write_text("untracked work\n")
    layer, _ = overlay.run("rm notes.md")
    review = Reviewer(overlay.layers).review(layer, str(overlay.workspace), protected=_protected)
    dialog = effects_dialog(review.held, "rm notes.md", "")
    assert "delete or overwrite work" in dialog.title
    assert "deleted notes.md (no repository can restore it; 1 file, 15 B)" in dialog.message
    assert dialog.preselect == "discard"
