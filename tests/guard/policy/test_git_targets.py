"""What the dialog names as the targets of a git command is what git changes: the stash and
the refs are not files of the workspace (``git stash drop`` named ``./drop``, ``git reset
--hard HEAD`` named ``./HEAD``, and grants were offered on them)."""

from __future__ import annotations

import pytest

from tests.guard.policy.conftest import World


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("git stash drop", []),
        ("git stash drop stash@{1}", []),
        ("git stash clear", []),
        ("git reset --hard HEAD", ["."]),
        ("git reset --hard HEAD~1", ["."]),
        ("git reset --hard origin/main", ["."]),
        ("git checkout -- a.txt", ["a.txt"]),
        ("git restore a.txt b.txt", ["a.txt", "b.txt"]),
        ("git clean -fd", ["."]),
    ],
)
def test_git_targets_are_what_git_changes(world: World, command: str, targets: list[str]) -> None:
    verdict = world.policy().classify("bash", {"command": command}, world.project)
    assert verdict.verdict == "confirm", command
    expected = [str(world.project) if t == "." else str(world.project / t) for t in targets]
    assert list(verdict.targets) == expected, command
