"""A flag only known at run time could be the dangerous flag: the rule matches (fail closed).

``builtin.unresolved`` also fires for these commands, so a test that only looks at the verdict
cannot tell whether the flag rule itself failed closed. These tests name the flag rule, and a
project rule that *blocks* shows the difference in the verdict (unresolved alone only asks).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict

from .conftest import World


@pytest.mark.parametrize(
    ("command", "rule_id"),
    [
        ("git clean $X", "builtin.git-clean"),
        ('git clean "$X"', "builtin.git-clean"),
        ("git reset $MODE", "builtin.git-reset-hard"),
        ("git reset ${MODE:-}", "builtin.git-reset-hard"),
        ("docker compose down $V", "builtin.compose-down-volumes"),
        ("git push origin $F", "builtin.git-push-force"),
    ],
)
def test_a_runtime_flag_fires_the_flag_rule_itself(
    bash: Callable[[str], Verdict], command: str, rule_id: str
) -> None:
    verdict = bash(command)
    assert rule_id in verdict.rule_ids
    assert verdict.verdict == "confirm"


@pytest.mark.parametrize(
    ("command", "rule_id"),
    [
        ("git clean -n", "builtin.git-clean"),
        ("git reset HEAD~1", "builtin.git-reset-hard"),
        ("docker compose down", "builtin.compose-down-volumes"),
    ],
)
def test_the_same_commands_with_known_harmless_flags_do_not(
    bash: Callable[[str], Verdict], command: str, rule_id: str
) -> None:
    assert rule_id not in bash(command).rule_ids


@pytest.mark.parametrize(
    "command", ["git reset $MODE", "git reset --soft $MODE", "git reset $(echo --hard)"]
)
def test_a_runtime_flag_meets_a_blocking_rule_and_is_blocked(world: World, command: str) -> None:
    world.project_config(
        '[[rule]]\nid = "team.no-hard-reset"\nverdict = "block"\nprogram = ["git"]\n'
        'subcommand = ["reset"]\nflags = ["--hard"]\nreason = "no hard resets here"\n'
    )
    verdict = world.policy().classify("bash", {"command": command}, world.project)
    assert verdict.verdict == "block"
    assert "team.no-hard-reset" in verdict.rule_ids


def test_a_blocking_rule_still_lets_a_known_harmless_flag_through(world: World) -> None:
    world.project_config(
        '[[rule]]\nid = "team.no-hard-reset"\nverdict = "block"\nprogram = ["git"]\n'
        'subcommand = ["reset"]\nflags = ["--hard"]\nreason = "no hard resets here"\n'
    )
    verdict = world.policy().classify("bash", {"command": "git reset --soft HEAD~1"}, world.project)
    assert verdict.verdict != "block"
    assert "team.no-hard-reset" not in verdict.rule_ids


def test_a_runtime_word_meets_all_flags_of_a_blocking_rule(world: World) -> None:
    world.project_config(
        '[[rule]]\nid = "team.no-force-delete"\nverdict = "block"\nprogram = ["git"]\n'
        'subcommand = ["branch"]\nall_flags = ["-d|--delete", "-f|--force"]\nreason = "x"\n'
    )
    verdict = world.policy().classify("bash", {"command": "git branch -d $F main"}, world.project)
    assert verdict.verdict == "block"
