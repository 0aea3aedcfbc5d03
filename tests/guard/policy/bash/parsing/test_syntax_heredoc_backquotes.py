"""Backquoted commands in an unquoted heredoc body run, as in bash.

tree-sitter-bash leaves ```rm -rf ~``` in a heredoc body as plain text; the analysis used to
miss it and allow ``cat <<EOF`` with a destructive backquoted command inside.
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
    ("command", "runs"),
    [
        ("cat <<EOF\nplain `rm -rf x` text\nEOF", ["rm", "-rf", "x"]),
        ("cat <<EOF\n$x `git reset --hard`\nEOF", ["git", "reset", "--hard"]),
        ("cat <<-EOF\n\t`rm t`\n\tEOF", ["rm", "t"]),
        ("cat <<EOF\n`echo \\`rm q\\``\nEOF", ["rm", "q"]),
        ("cat <<EOF\n`printf '%s' \\$HOME`\nEOF", ["printf", "%s", "/h"]),
    ],
)
def test_a_backquoted_command_in_an_unquoted_heredoc_runs(command: str, runs: list[str]) -> None:
    assert runs in argvs(command)


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF'\n`rm -rf x`\nEOF",
        'cat <<"EOF"\n`rm -rf x`\nEOF',
        "cat <<\\EOF\n`rm -rf x`\nEOF",
        "cat <<E\\OF\n`rm -rf x`\nEOF",
    ],
)
def test_a_quoted_heredoc_runs_nothing(command: str) -> None:
    assert argvs(command) == [["cat"]]
    assert checks(command) == []


def test_an_escaped_backquote_is_text() -> None:
    assert argvs("cat <<EOF\nsay \\`rm -rf x\\` here\nEOF") == [["cat"]]


def test_an_unmatched_backquote_is_unresolved() -> None:
    assert checks("cat <<EOF\na ` b\nEOF") == ["unresolved"]


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("cat <<EOF\n`git reset --hard`\nEOF", "builtin.git-reset-hard"),
        ("cat <<EOF > notes\n`rm -rf build`\nEOF", "builtin.rm"),
    ],
)
def test_a_destructive_backquoted_command_in_a_heredoc_asks(
    bash: Callable[[str], Verdict], command: str, rule: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict != "allow"
    assert rule in verdict.rule_ids


def test_a_catastrophic_backquoted_command_in_a_heredoc_is_blocked(
    bash: Callable[[str], Verdict],
) -> None:
    assert bash("cat <<EOF\n`rm -rf /`\nEOF").verdict == "block"


def test_an_unmatched_backquote_is_reported_verbatim() -> None:
    findings = analyze("cat <<EOF\na ` b\nEOF", cwd="/w", home="/h").findings
    assert [(f.check, f.detail) for f in findings] == [
        ("unresolved", "an unmatched backquote in a heredoc: a ` b")
    ]


@pytest.mark.parametrize(("escaped", "kept"), [("\\X", "a\\Xb"), ("\\q", "a\\qb")])
def test_inside_backquotes_other_backslashes_are_kept(escaped: str, kept: str) -> None:
    command = "cat <<EOF\n`echo 'a" + escaped + "b'`\nEOF"
    assert argvs(command) == [["echo", kept], ["cat"]]
