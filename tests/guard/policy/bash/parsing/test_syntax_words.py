"""Parameter expansions in words and variable assignments in the bash analysis.

Only a plain ``$HOME``/``$PWD`` resolves; any other expansion is unknown (None) and its
substitutions still run. Assigning a variable the analysis relies on, or a name that is not
an identifier, asks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze

CHANGES = ", which changes what later commands run or where their paths point"


def argvs(command: str, cwd: str = "/w") -> list[list[str | None]]:
    script = analyze(command, cwd=cwd, home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("cat $HOME/x", ["cat", "/h/x"]),
        ("cat ${HOME}/x", ["cat", "/h/x"]),
        ("cat $PWD/x", ["cat", "/w/x"]),
        ("cat ${PWD}/x", ["cat", "/w/x"]),
        ('cat "$PWD"', ["cat", "/w"]),
    ],
)
def test_plain_home_and_pwd_resolve(command: str, argv: list[str]) -> None:
    assert argvs(command) == [argv]


def test_pwd_follows_cd() -> None:
    assert argvs("cd sub && cat $PWD/x") == [["cd", "sub"], ["cat", "/w/sub/x"]]
    assert argvs("cat $PWD", cwd="/srv/app") == [["cat", "/srv/app"]]


@pytest.mark.parametrize(
    "command",
    [
        "cat ${HOME%/*}",
        "cat ${HOME:-/tmp}",
        "cat ${HOME/h/x}",
        "cat ${PWD#/}",
        "cat ${PWD:+/etc}",
        "cat $pwd",
        "cat $home",
        "cat ${#}",
        "cat ${!x}",
        "cat ${@:1}",
        "cat $1",
        "cat ${x[1]}",
    ],
)
def test_any_other_expansion_is_unknown(command: str) -> None:
    assert argvs(command) == [["cat", None]]


@pytest.mark.parametrize("target", ["${HOME%/*}", "${HOME:-/tmp}", "${PWD/w/etc}"])
def test_an_operator_on_home_is_not_home(bash: Callable[[str], Verdict], target: str) -> None:
    assert argvs("rm -rf " + target) == [["rm", "-rf", None]]
    assert bash("rm -rf " + target).verdict != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "echo ${x:-$(rm -rf y)}",
        "echo ${x:=$(rm -rf y)}",
        "echo ${HOME:-$(rm -rf y)}",
    ],
)
def test_substitutions_inside_an_expansion_run(command: str) -> None:
    assert argvs(command) == [["rm", "-rf", "y"], ["echo", None]]


@pytest.mark.parametrize(
    "command",
    ["A=1", "arr[1]=x", "a[${b[1]}]=v", "x[$i]=1", "export arr[2]=y", "builtin export a[1]=x"],
)
def test_assigning_an_ordinary_variable_or_array_element_has_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("PATH=/x", "PATH"),
        ("PATH[0]=/x", "PATH"),
        ("export PATH=/x", "PATH"),
        ("BASH_ENV=x ls", "BASH_ENV"),
        ("builtin export =x", "a variable"),
        ("command declare [1]=x", "a variable"),
    ],
)
def test_assigning_a_sensitive_or_nameless_variable_is_reported(command: str, name: str) -> None:
    assert findings(command) == [("shell-environment", f"assigns {name}{CHANGES}")]


def test_an_assignment_with_a_sensitive_name_asks(bash: Callable[[str], Verdict]) -> None:
    assert bash("A=1").verdict == "allow"
    assert bash("arr[1]=x").verdict == "allow"
    verdict = bash("PATH[0]=/tmp")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.shell-environment",)
