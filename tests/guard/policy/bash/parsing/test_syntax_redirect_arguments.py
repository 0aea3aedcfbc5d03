"""Words after a redirection's target are the command's arguments, as in bash.

tree-sitter-bash puts ``reset --hard`` of ``git 2>&1 reset --hard`` into the redirection;
the analysis must still see ``git reset --hard`` (it used to see a bare ``git`` and allow it).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def writes(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [w.value for c in script.commands for w in c.redirect_writes]


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "argv", "written"),
    [
        ("git 2>&1 reset --hard", ["git", "reset", "--hard"], []),
        ("rm >/dev/null -rf build", ["rm", "-rf", "build"], ["/dev/null"]),
        ("echo a >x b >y c", ["echo", "a", "b", "c"], ["x", "y"]),
        ("echo a &>x b", ["echo", "a", "b"], ["x"]),
        ("cat <in -n f", ["cat", "-n", "f"], []),
        ("echo >&- x", ["echo", "x"], []),
        ("cat <&- f", ["cat", "f"], []),
        ("A=1 rm >x -rf y", ["rm", "-rf", "y"], ["x"]),
    ],
)
def test_words_after_a_redirection_target_are_arguments(
    command: str, argv: list[str], written: list[str]
) -> None:
    assert argvs(command) == [argv]
    assert writes(command) == written
    assert "parse-error" not in checks(command)


def test_words_after_a_redirection_next_to_a_heredoc_are_arguments() -> None:
    command = "cat <<EOF >out -n x\nhello\nEOF"
    assert argvs(command) == [["cat", "-n", "x"]]
    assert writes(command) == ["out"]


def test_substitutions_in_words_after_a_redirection_run() -> None:
    assert argvs("echo >/dev/null $(rm -rf x)") == [["rm", "-rf", "x"], ["echo", None]]


@pytest.mark.parametrize(
    "command", ["{ a; } > x rm -rf y", "while a; do b; done > x rm", "(a) 2>/dev/null b"]
)
def test_words_after_a_compound_commands_redirection_do_not_parse(command: str) -> None:
    # bash refuses these ("syntax error near unexpected token"): the analysis asks.
    assert "parse-error" in checks(command)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git 2>&1 reset --hard", "builtin.git-reset-hard"),
        ("git >/dev/null reset --hard", "builtin.git-reset-hard"),
        ("find 2>/dev/null . -delete", "builtin.find-delete"),
        ("dd >/dev/null if=/dev/zero of=/dev/sda", "builtin.dd-output"),
        ("rm 2>&1 -rf build", "builtin.rm"),
    ],
)
def test_a_destructive_command_split_by_a_redirection_asks(
    bash: Callable[[str], Verdict], command: str, rule: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict != "allow"
    assert rule in verdict.rule_ids


def test_a_catastrophic_target_after_a_redirection_is_blocked(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash("rm >/dev/null -rf /")
    assert verdict.verdict == "block"
    assert "builtin.catastrophic-target" in verdict.rule_ids


def test_words_after_a_compound_commands_redirection_are_reported_verbatim() -> None:
    findings = analyze("{ a; } > x rm", cwd="/w", home="/h").findings
    assert [(f.check, f.detail) for f in findings] == [
        ("parse-error", "words after a redirection where bash allows none: { a; } > x rm")
    ]


@pytest.mark.parametrize("command", ["echo x >& $f", 'echo x 1>&"$f"', "echo x > $f"])
def test_a_duplication_target_only_known_at_runtime_may_be_a_file(
    bash: Callable[[str], Verdict], command: str
) -> None:
    # bash: `>& WORD` duplicates a descriptor when WORD expands to digits or "-", and
    # otherwise writes stdout and stderr to the file WORD
    assert writes(command) == [None]
    assert bash(command).verdict == "confirm"


@pytest.mark.parametrize("command", ["echo x >& 2", "echo x 2>&1", "echo x >&-", "exec 3>&-"])
def test_a_duplication_of_a_known_descriptor_writes_no_file(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert writes(command) == []
    assert bash(command).verdict == "allow"
