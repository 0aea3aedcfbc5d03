"""Wrapper spellings that once let a destructive command through, or crashed the analysis.

``env -`` is ``env -i``; ``env -C DIR`` moves only the command env runs, and a directory only
known at runtime asks like ``cd "$D"``; xargs' ``--replace``, ``--eof`` and ``--max-lines`` take
a value only as ``--opt=VALUE``, so the next word is the command; ``xargs -I`` without a
marker does not crash; the words after ``env -S STRING`` keep their globs and braces (bash
expanded them before env ran); env takes every word with ``=`` as an assignment, so an
exported function (``BASH_FUNC_ls%%=…``) is not read as the program; ``command NAME -v``
runs NAME (only a ``-v`` before the name is ``command``'s lookup).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def argvs_and_cwds(command: str) -> list[tuple[list[str | None], str]]:
    script = analyze(command, cwd="/w", home="/h")
    return [([w.value for w in c.argv], c.cwd) for c in script.commands]


@pytest.mark.parametrize("command", ["env - rm -rf /", "env -i - rm -rf /", "env - A=1 rm -rf /"])
def test_env_dash_runs_the_command_after_it(bash: Callable[[str], Verdict], command: str) -> None:
    assert bash(command).verdict == "block"


def test_env_dash_is_a_known_flag() -> None:
    script = analyze("env - rm x", cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands] == [["rm", "x"]]
    assert script.findings == []


@pytest.mark.parametrize(
    "command",
    ['env -C "$D" touch x', 'env --chdir "$D" sh -c "echo hi > .bashrc"', 'env -C "$D"'],
)
def test_env_chdir_to_a_directory_known_only_at_runtime_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.unresolved" in verdict.rule_ids


@pytest.mark.parametrize(
    "command",
    [
        "env -C /srv true; echo x > .pi/operator-guard.toml",
        "env -C /srv true && echo x > .pi/operator-guard.toml",
        "env -C /srv -S 'true'; echo x > .pi/operator-guard.toml",
    ],
)
def test_env_chdir_does_not_move_later_commands(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.guard-config" in verdict.rule_ids


def test_env_chdir_moves_only_its_own_command() -> None:
    assert argvs_and_cwds("env -C /srv rm x; rm y") == [(["rm", "x"], "/srv"), (["rm", "y"], "/w")]
    assert argvs_and_cwds("env -C sub env -C ../o rm x; rm y") == [
        (["rm", "x"], "/w/o"),
        (["rm", "y"], "/w"),
    ]


@pytest.mark.parametrize(
    "command", ["echo 'rm -rf a' | env -C /srv sh", "env -C /srv sh <<< 'rm -rf a'"]
)
def test_env_chdir_keeps_the_commands_stdin(command: str) -> None:
    assert (["rm", "-rf", "a"], "/srv") in argvs_and_cwds(command)


@pytest.mark.parametrize(
    "command",
    [
        "ls | xargs --replace rm -rf echo {}",
        "ls | xargs --eof rm -rf echo",
        "ls | xargs --max-lines rm -rf echo",
    ],
)
def test_xargs_options_with_an_optional_value_do_not_swallow_the_command(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.rm" in verdict.rule_ids


def test_xargs_replace_without_a_value_replaces_braces() -> None:
    assert argvs_and_cwds("xargs --replace rm {}/x <<< a") == [(["rm", "a/x"], "/w")]


@pytest.mark.parametrize(
    ("command", "argv"),
    [("xargs -I", ["echo"]), ("xargs --replace", ["echo"]), ("xargs -n1 -I", ["echo"])],
)
def test_xargs_replace_without_a_marker_does_not_crash(
    command: str, argv: list[str | None]
) -> None:
    assert argvs_and_cwds(command) == [(argv, "/w")]


@pytest.mark.parametrize(
    ("command", "verdict", "rule"),
    [
        ("env -S cat {.env,x}", "confirm", "builtin.dotenv"),
        ("env -S 'rm -rf' {/,x}", "block", "builtin.catastrophic-target"),
        ("env -S cat ~/.ssh/*", "confirm", "builtin.key-files"),
    ],
)
def test_env_split_string_arguments_keep_their_globs_and_braces(
    bash: Callable[[str], Verdict], command: str, verdict: str, rule: str
) -> None:
    result = bash(command)
    assert result.verdict == verdict
    assert rule in result.rule_ids


@pytest.mark.parametrize(
    "command",
    [
        "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls",
        "env 'BASH_FUNC_ls()=() { rm -rf x; }' bash -c ls",
        "env A=1 'BASH_FUNC_echo%%=() { rm -rf ~; }' bash -c 'echo hi'",
        "env '=x' rm -rf build",
        "env 'a-b=1' rm -rf build",
        "env 1A=2 rm -rf build",
    ],
)
def test_env_takes_every_word_with_an_equals_sign_as_an_assignment(
    bash: Callable[[str], Verdict], command: str
) -> None:
    # GNU and BSD env export any NAME=VALUE, even a name bash could not spell: an exported
    # function (BASH_FUNC_ls%%) replaces the command the child shell runs.
    verdict = bash(command)
    assert verdict.verdict != "allow"
    assert "builtin.shell-environment" in verdict.rule_ids
    program = analyze(command, cwd="/w", home="/h").commands[-1].argv[0].value
    assert program is not None and "=" not in program


@pytest.mark.parametrize(
    "command",
    [
        "command rm -v -rf ~",
        "command rm -V -rf ~",
        "command -p rm -v -rf ~",
        "command -- rm -v -rf ~",
        "env command rm -v -rf ~",
        "bash -c 'command rm -v -rf ~'",
    ],
)
def test_a_v_after_the_name_command_runs_is_that_programs_own(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert bash(command).verdict == "block", command


@pytest.mark.parametrize("command", ["command rm -v a.txt", "command git -v clean -fdx"])
def test_command_with_a_v_after_the_name_still_runs_the_name(command: str) -> None:
    assert [c.program for c in analyze(command, cwd="/w", home="/h").commands] == [
        command.split()[1]
    ]
