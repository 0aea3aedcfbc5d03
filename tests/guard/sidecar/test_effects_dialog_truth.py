"""The effects review's dialog says what the held changes are: a creation is titled as one
with its real file count and size, and Apply comes first (Enter alone applies) only where
applying loses nothing; a deletion the command moved says where the file went."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard._effects import Effect, Hold
from guard._sidecar.session.effects import _moves
from guard._sidecar.text import effects_dialog


def created(path: str, files: int, size: int, reason: str = "protected") -> Hold:
    effect = Effect(kind="created", path=path, kind_of="dir", was="none", files=files, size=size)
    return Hold.model_validate({"effect": effect, "reason": reason, "files": files, "bytes": size})


def deleted(path: str, reason: str = "untracked") -> Hold:
    effect = Effect(kind="deleted", path=path, kind_of="none", was="file", before=9, files=1)
    return Hold.model_validate({"effect": effect, "reason": reason, "files": 1, "bytes": 9})


def test_a_held_creation_is_a_creation_with_its_counts_and_apply_first() -> None:
    dialog = effects_dialog([created("tool/keys", 2300, 14 << 20)], "python3 make.py", "")
    assert (
        dialog.title
        == "operator-guard: the agent's command wants to create files in a protected place"
    )
    assert "1 creation (2300 files, 14.0 MiB)" in dialog.message
    assert "created tool/keys (a protected path; 2300 files, 14.0 MiB)" in dialog.message
    assert dialog.preselect == "apply"
    assert "Enter alone applies; no answer in time discards" in dialog.message
    assert "delete" not in dialog.title and "Discard is preselected" not in dialog.message


@pytest.mark.parametrize(
    "held",
    [
        [deleted("notes.md")],
        [created("out", 3, 30), deleted("notes.md")],
        [created(".pi/extensions/x", 1, 10)],
        [created(".git/hooks/pre-commit", 1, 10)],
        [created("out", 1, 10, reason="conflict")],
    ],
    ids=["deletion", "creation-and-deletion", "pi-extension", "git-hook", "conflict"],
)
def test_discard_stays_first_wherever_applying_could_cost(held: list[Hold]) -> None:
    dialog = effects_dialog(held, "sh x.sh", "")
    assert dialog.preselect == "discard"
    assert "Discard is preselected" in dialog.message


@pytest.mark.parametrize(
    ("command", "moved"),
    [
        ("mv notes.md /tmp/", {"notes.md": "/tmp/notes.md"}),
        ("mv -t /tmp notes.md", {"notes.md": "/tmp/notes.md"}),
        ("mv --target-directory=/tmp notes.md", {"notes.md": "/tmp/notes.md"}),
        ("mv -f -- notes.md /tmp/kept.md", {"notes.md": "/tmp/kept.md"}),
        ("mv notes.md docs/a.md /tmp", {"notes.md": "/tmp/notes.md", "docs/a.md": "/tmp/a.md"}),
        ("cd docs && mv ../notes.md /tmp/", {"notes.md": "/tmp/notes.md"}),
        ("echo hi; mv notes.md /var/tmp/", {"notes.md": "/var/tmp/notes.md"}),
        ("mv notes.md $DEST", {}),
        ("rm notes.md", {}),
    ],
)
def test_where_a_move_put_each_path(tmp_path: Path, command: str, moved: dict[str, str]) -> None:
    (tmp_path / "docs").mkdir()
    assert _moves(command, str(tmp_path)) == moved


def test_a_held_move_says_where_the_file_went(tmp_path: Path) -> None:
    command = "mv notes.md /tmp/"
    dialog = effects_dialog([deleted("notes.md")], command, "", _moves(command, str(tmp_path)))
    assert "moved to /tmp/notes.md: notes.md (not in git; 1 file, 9 B)" in dialog.message
    assert "deleted notes.md" not in dialog.message
