"""Backslashes at the end of an unquoted heredoc body, and backquotes past the depth limit.

A backslash quotes the next character of a heredoc body; one that is the very last character
quotes nothing (and must not crash the walk). A backquoted command one level past the depth
limit is a ``nesting-too-deep`` finding that says where it came from.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.model import MAX_DEPTH
from guard._policy.bash.walker import analyze


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def wrapped(levels: int, command: str) -> str:
    for _ in range(levels):
        command = "bash -c '" + command.replace("'", "'\\''") + "'"
    return command


HEREDOC = "cat <<EOF\n`rm -rf x`\nEOF"


@pytest.mark.parametrize("command", ["cat <<EOF\n\\", "cat <<EOF\n$\\"])
def test_a_backslash_ending_an_unterminated_heredoc_body_quotes_nothing(command: str) -> None:
    assert argvs(command) == [["cat"]]
    assert findings(command) == [
        ("parse-error", "the command does not parse as bash: " + command.replace("\n", " "))
    ]


def test_a_backslash_before_the_last_character_of_the_body_escapes_it() -> None:
    # The body tree-sitter-bash gives is "`rm -rf x\`": its last backquote is escaped.
    command = 'cat <<EOF\n`rm -rf x\\`${"EOF'
    assert argvs(command) == [["cat"]]
    assert ("unresolved", "an unmatched backquote in a heredoc: `rm -rf x\\`") in findings(command)


@pytest.mark.parametrize(
    ("body", "runs"),
    [
        ("`rm a\\\\\\\\`", ["rm", "a\\"]),
        ("`rm a\\$b`", ["rm", None]),
        ("`rm 'a\\b'`", ["rm", "a\\b"]),
        ("x\\`rm a\\` `rm b`", ["rm", "b"]),
    ],
)
def test_escapes_inside_a_backquoted_command(body: str, runs: list[str]) -> None:
    assert argvs("cat <<EOF\n" + body + "\nEOF") == [runs, ["cat"]]


def test_a_backquoted_command_at_the_depth_limit_runs() -> None:
    command = wrapped(MAX_DEPTH - 1, HEREDOC)
    assert argvs(command) == [["rm", "-rf", "x"], ["cat"]]
    assert findings(command) == []


def test_a_backquoted_command_past_the_depth_limit_says_where_it_is() -> None:
    command = wrapped(MAX_DEPTH, HEREDOC)
    assert argvs(command) == [["cat"]]
    assert findings(command) == [
        (
            "nesting-too-deep",
            f"a backquoted command in a heredoc: nested deeper than {MAX_DEPTH} levels",
        )
    ]


def test_the_operator_is_told_the_backquoted_command_is_nested_too_deep(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash(wrapped(MAX_DEPTH, HEREDOC))
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.nesting-too-deep",)
    assert verdict.reasons == (
        f"a backquoted command in a heredoc: nested deeper than {MAX_DEPTH} levels",
    )
