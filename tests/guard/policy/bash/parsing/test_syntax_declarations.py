"""Declaration commands (``export``/``declare``/``local``/``readonly``) in the bash analysis.

Assignments inside a declaration are walked like plain assignments; names written out are
harmless; a name only known at runtime, a quoted ``NAME=value`` word or a nameref asks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze

RUNTIME_NAME = "declares a variable whose name is only known at runtime, or a nameref: "


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def named_values(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [w.value for c in script.commands for w in c.named]


def programs(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [c.argv[0].value for c in script.commands if c.argv]


@pytest.mark.parametrize(
    "command",
    [
        "export A=1",
        "export A=1 B=2",
        "export B",
        "export A=1 B",
        "local x",
        "readonly A",
        "declare -i n",  # an option, but not -n: no nameref
        "declare -rx A",
        "declare -x",
        "declare -p",
        "declare -a arr=(1 2)",
        "export -- X",
        "local -",
        "typeset -g A=1",
    ],
)
def test_declarations_with_written_out_names_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ('declare "$v"', '"$v"'),
        ("export $name", "$name"),
        ("export $(echo A)=1", "$(echo A)=1"),
        ("export 'X=1'", "'X=1'"),
        ('export "PATH=/tmp"', '"PATH=/tmp"'),
        ("declare -n r=x", "-n"),
        ("declare -rn r=x", "-rn"),
        ("local -n ref", "-n"),
        ("export -n A", "-n"),
    ],
)
def test_runtime_names_quoted_assignments_and_namerefs_are_reported_verbatim(
    command: str, raw: str
) -> None:
    assert findings(command) == [("shell-environment", RUNTIME_NAME + raw)]


def test_a_name_written_before_a_runtime_name_does_not_hide_it() -> None:
    assert findings('export B "$v"') == [("shell-environment", RUNTIME_NAME + '"$v"')]
    assert findings("local a b $c") == [("shell-environment", RUNTIME_NAME + "$c")]


def test_an_assignment_before_a_runtime_name_does_not_hide_it() -> None:
    assert findings('export A=1 "$v"') == [("shell-environment", RUNTIME_NAME + '"$v"')]


def test_an_assignment_in_a_declaration_is_walked_like_a_plain_assignment() -> None:
    assert named_values("export A=1") == ["1"]
    assert named_values("export A=$HOME/x") == ["/h/x"]
    assert named_values("export A=1 B=/data") == ["1", "/data"]
    assert findings("export PATH=/x") == [
        (
            "shell-environment",
            "assigns PATH, which changes what later commands run or where their paths point",
        )
    ]


def test_every_assignment_of_a_declaration_is_walked() -> None:
    assert [check for check, _ in findings("export A=1 PATH=/x")] == ["shell-environment"]
    assert programs("export A=1 B=$(rm -rf /x)") == ["rm"]
    assert programs("local a b=1 c=$(shred f)") == ["shred"]


def test_a_comment_inside_a_broken_declaration_is_not_a_name() -> None:
    # tree-sitter only puts a comment inside a declaration when it recovers from an error.
    assert findings("[ export #c\nx") == [
        ("parse-error", "the command does not parse as bash: [ export #c x")
    ]
    assert findings("[ export a #c\nb") == [
        ("parse-error", "the command does not parse as bash: [ export a #c b")
    ]


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("export A=1", "allow"),
        ("export A=1 B", "allow"),
        ("declare -i n", "allow"),
        ('export B "$v"', "confirm"),
        ("declare -n r=x", "confirm"),
        ("export 'X=1'", "confirm"),
        ("export A=1 PATH=/x", "confirm"),
    ],
)
def test_declaration_verdicts(bash: Callable[[str], Verdict], command: str, verdict: str) -> None:
    assert bash(command).verdict == verdict


def test_a_destructive_command_in_a_later_declared_value_asks(
    bash: Callable[[str], Verdict],
) -> None:
    result = bash("export A=1 B=$(rm -rf /x)")
    assert result.verdict != "allow"
    assert "builtin.rm" in result.rule_ids
