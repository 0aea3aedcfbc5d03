"""A layer the review is done with leaves the layers' names at once and is removed off the
reply's path: no later review, recovery or list of held layers sees it. Real overlay."""

from __future__ import annotations

import time
from pathlib import Path

from guard._effects import Reviewer, recover
from guard._home import HELD_FILE, JOURNAL_FILE
from tests.guard.effects.conftest import Overlay


def _gone_within(layers: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(layers.iterdir()):
            return True
        time.sleep(0.02)
    return False


def test_an_empty_layer_is_gone_from_its_id_at_once_and_from_disk_soon(overlay: Overlay) -> None:
    (overlay.workspace / "a.txt").write_text("a\n")
    layer, _ = overlay.run("cat a.txt > /dev/null")
    reviewer = Reviewer(overlay.layers)
    review = reviewer.review(layer, str(overlay.workspace), protected=lambda _p: False)
    assert review.decision == "empty"
    assert not (overlay.layers / layer).exists()  # its id names nothing from the reply on
    assert _gone_within(overlay.layers)


def test_an_applied_layer_goes_too_and_what_it_did_stays(overlay: Overlay) -> None:
    layer, _ = overlay.run("echo new > made.txt")
    reviewer = Reviewer(overlay.layers)
    review = reviewer.review(layer, str(overlay.workspace), protected=lambda _p: False)
    assert review.decision == "applied"
    assert (overlay.workspace / "made.txt").read_text() == "new\n"
    assert not (overlay.layers / layer).exists()
    assert _gone_within(overlay.layers)


def test_a_dropped_layer_is_never_held_nor_recovered(tmp_path: Path) -> None:
    """What a crash leaves of a dropped layer (a journal, a held file) is no layer."""
    layers = tmp_path / "layers"
    left = layers / ".gone-abcdefgh12"
    left.mkdir(parents=True)
    (left / HELD_FILE).write_text("{}")
    (left / JOURNAL_FILE).write_text('{"steps": [], "upper": "/nonexistent", "workspace": "/"}\n')
    assert Reviewer(layers).held() == []
    assert recover(layers) == []
