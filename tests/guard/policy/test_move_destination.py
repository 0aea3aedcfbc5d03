"""A move or a recursive copy into a directory writes what lands there, not the whole of it:
``mv notes.md /tmp/`` in a project under ``/tmp`` is not a write of the guard's home or
installation beside it (``cp notes.md /tmp/`` never was). A destination the shell expands,
``-T``, ``rsync`` (``--delete``), a source that is the guard's home or a link to it still
reach all of it."""

from __future__ import annotations

import pytest

from guard._policy import Policy
from tests.guard.policy.conftest import World

GUARD_RULES = {"builtin.guard-home", "builtin.guard-anchor", "builtin.guard-installation"}

INTO_THE_PARENT = [
    "mv notes.md {parent}/",
    "mv notes.md {parent}",
    "mv -t {parent} notes.md",
    "mv --target-directory={parent} notes.md",
    "mv -f -- notes.md {parent}/",
    "mv notes.md docs {parent}/",
    "mv docs/ {parent}/",
    "cp -r docs {parent}/",
    "cp -a notes.md docs {parent}",
    "command mv -v notes.md {parent}/",
]

STILL_THE_GUARDS = [
    "mv notes.md {guard}/",
    "mv -t {guard} notes.md",
    "mv -T notes.md {guard}",
    "cp -rT docs {guard}",
    "mv {home} {parent}/elsewhere",
    "mv notes.md {parent}/*",
    "mv notes.md $DEST",
    "rsync -a --delete docs/ {parent}/",
    "mv . {parent}/",
    "mv notes.md lnk/",
    "cp -r docs lnk/",
    "ln -s {guard} l2 && mv notes.md l2/",
]


@pytest.fixture
def policy(world: World) -> Policy:
    (world.project / "notes.md").write_text("my notes\n")
    (world.project / "docs").mkdir()
    world.guard_home.mkdir(parents=True)
    (world.project / "lnk").symlink_to(world.guard_home)
    return world.policy()


def _spell(world: World, command: str) -> str:
    parent = world.project.parent
    return command.format(parent=parent, guard=world.guard_home, home=world.home)


@pytest.mark.parametrize("command", INTO_THE_PARENT)
def test_a_move_into_the_parent_is_not_a_write_of_the_guard(
    world: World, policy: Policy, command: str
) -> None:
    verdict = policy.classify("bash", {"command": _spell(world, command)}, world.project)
    assert verdict.verdict != "block", verdict
    assert not GUARD_RULES.intersection(verdict.rule_ids), verdict.rule_ids


@pytest.mark.parametrize("command", STILL_THE_GUARDS)
def test_what_still_reaches_the_guard_is_blocked_or_asked(
    world: World, policy: Policy, command: str
) -> None:
    verdict = policy.classify("bash", {"command": _spell(world, command)}, world.project)
    assert verdict.verdict in ("block", "confirm"), verdict
    if "$DEST" not in command:
        assert verdict.verdict == "block" and GUARD_RULES.intersection(verdict.rule_ids), verdict
