"""Which pattern text (``${x#…}``, ``[[ … =~ … ]]``) is parsed again for substitutions.

Every kind of substitution is run, each on its own and all together; a pattern holding none
is plain text, even one that would not parse as bash.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "pattern", ["$(rm -rf y)", "`rm -rf y`", "<(rm -rf y)", ">(rm -rf y)", "a*>(rm -rf y)"]
)
def test_each_kind_of_substitution_in_a_pattern_runs(pattern: str) -> None:
    command = "echo ${x#" + pattern + "}"
    assert argvs(command) == [["rm", "-rf", "y"], ["echo", None]]
    assert checks(command) == []


def test_all_kinds_of_substitution_in_one_pattern_run() -> None:
    command = "echo ${x#$(rm -rf a)`rm -rf b`<(rm -rf c)>(rm -rf d)}"
    assert argvs(command) == [
        ["rm", "-rf", "a"],
        ["rm", "-rf", "b"],
        ["rm", "-rf", "c"],
        ["rm", "-rf", "d"],
        ["echo", None],
    ]
    assert checks(command) == []


@pytest.mark.parametrize(
    "command", ["echo ${x#(}", "echo ${x%)}", "echo ${x#<}", "echo ${x#>}", "echo ${x#$}"]
)
def test_a_pattern_without_substitutions_is_not_parsed_again(command: str) -> None:
    assert argvs(command) == [["echo", None]]
    assert checks(command) == []
