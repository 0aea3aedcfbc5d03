"""How deep nested scripts (``bash -c`` inside ``bash -c`` …) are followed, and what they inherit.

``MAX_DEPTH`` levels are analysed; one more is a ``nesting-too-deep`` finding (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.model import MAX_DEPTH
from guard._policy.bash.walker import analyze


def wrapped(levels: int, command: str = "rm -rf build") -> str:
    for _ in range(levels):
        command = "bash -c '" + command.replace("'", "'\\''") + "'"
    return command


def rm_argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.program == "rm"]


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def test_the_depth_limit_is_eight() -> None:
    assert MAX_DEPTH == 8


@pytest.mark.parametrize("levels", [1, MAX_DEPTH - 1, MAX_DEPTH])
def test_nesting_up_to_the_limit_is_analysed(levels: int) -> None:
    assert rm_argvs(wrapped(levels)) == [["rm", "-rf", "build"]]
    assert findings(wrapped(levels)) == []


def test_one_level_past_the_limit_is_a_finding() -> None:
    command = wrapped(MAX_DEPTH + 1)
    assert rm_argvs(command) == []
    assert findings(command) == [
        ("nesting-too-deep", f"bash -c: nested deeper than {MAX_DEPTH} levels")
    ]


def test_nesting_past_the_limit_asks(bash: Callable[[str], Verdict]) -> None:
    assert bash(wrapped(MAX_DEPTH)).rule_ids == ("builtin.rm",)
    verdict = bash(wrapped(MAX_DEPTH + 1))
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.nesting-too-deep",)


@pytest.mark.parametrize("levels", [1, 2, MAX_DEPTH])
def test_a_nested_script_knows_home_and_the_working_directory(levels: int) -> None:
    script = analyze(wrapped(levels, "cat $HOME/x $PWD/y"), cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands if c.program == "cat"] == [
        ["cat", "/h/x", "/w/y"]
    ]


def test_a_nested_script_starts_where_the_outer_one_has_moved() -> None:
    script = analyze("cd sub && bash -c 'rm a'", cwd="/w", home="/h")
    assert [c.cwd for c in script.commands if c.program == "rm"] == ["/w/sub"]
