"""Command substitutions in a parameter expansion's pattern run, as in bash.

tree-sitter-bash keeps the pattern of ``${x#pattern}`` (and of ``[[ … =~ … ]]``) as plain
text; the analysis used to miss the ``$(rm -rf ~)`` in ``echo ${x#$(rm -rf ~)}`` and allow it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "echo ${x#$(rm -rf y)}",
        "echo ${x##*/$(rm -rf y)}",
        "echo ${x%$(rm -rf y)}",
        "echo ${x%%$(rm -rf y)}",
        "echo ${x%`rm -rf y`}",
        'echo "${x#$(rm -rf y)}"',
        "echo ${x#${z#$(rm -rf y)}}",
    ],
)
def test_a_substitution_in_an_expansion_pattern_runs(command: str) -> None:
    assert argvs(command) == [["rm", "-rf", "y"], ["echo", None]]
    assert checks(command) == []


def test_a_substitution_in_a_regex_match_runs() -> None:
    assert argvs("[[ x =~ ^a$(rm -rf y)b ]]") == [["rm", "-rf", "y"]]


@pytest.mark.parametrize(
    "command", ["echo ${path#$HOME/}", "echo ${x%.txt}", "echo ${x##*/}", "[[ $x =~ ^[a-z]+$ ]]"]
)
def test_a_pattern_without_substitutions_runs_nothing(command: str) -> None:
    assert [argv[0] for argv in argvs(command)] in ([], ["echo"])
    assert checks(command) == []


def test_a_pattern_that_does_not_parse_is_unresolved() -> None:
    assert "unresolved" in checks("echo ${x#$(}")


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("echo ${x#$(git reset --hard)}", "builtin.git-reset-hard"),
        ("echo ${x%`rm -rf build`}", "builtin.rm"),
    ],
)
def test_a_destructive_substitution_in_a_pattern_asks(
    bash: Callable[[str], Verdict], command: str, rule: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict != "allow"
    assert rule in verdict.rule_ids


def test_a_catastrophic_substitution_in_a_pattern_is_blocked(
    bash: Callable[[str], Verdict],
) -> None:
    assert bash("echo ${x#$(rm -rf ~)}").verdict == "block"


def test_patterns_nested_too_deep_fail_closed(bash: Callable[[str], Verdict]) -> None:
    command = "$(rm -rf y)"
    for _ in range(12):
        command = "${x#" + command + "}"
    command = "echo " + command
    assert "nesting-too-deep" in checks(command)
    assert bash(command).verdict == "confirm"


def nested_patterns(levels: int) -> str:
    command = "$(rm -rf y)"
    for _ in range(levels):
        command = "${x#" + command + "}"
    return "echo " + command


def test_patterns_nested_up_to_the_limit_are_analysed() -> None:
    assert argvs(nested_patterns(8)) == [["rm", "-rf", "y"], ["echo", None]]
    assert checks(nested_patterns(8)) == []


def test_one_pattern_past_the_limit_is_a_finding() -> None:
    script = analyze(nested_patterns(9), cwd="/w", home="/h")
    assert [c for c in script.commands if c.program == "rm"] == []
    assert [(f.check, f.detail) for f in script.findings] == [
        ("nesting-too-deep", "a pattern: nested deeper than 8 levels")
    ]


def test_a_pattern_that_does_not_parse_is_reported_verbatim() -> None:
    findings = analyze("echo ${x#$(}", cwd="/w", home="/h").findings
    assert [(f.check, f.detail) for f in findings] == [
        ("unresolved", "a pattern that does not parse as bash: $(")
    ]


def test_a_substitution_in_a_pattern_knows_home() -> None:
    assert argvs("echo ${x#$(cat $HOME/f)}") == [["cat", "/h/f"], ["echo", None]]


def test_a_process_substitution_in_a_pattern_runs() -> None:
    assert ["rm", "-rf", "y"] in argvs("echo ${x#<(rm -rf y)}")
