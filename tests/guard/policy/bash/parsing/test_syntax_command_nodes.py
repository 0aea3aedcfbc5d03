"""Simple-command and redirection nodes of the walk: comments inside a command node, prefix
redirections, the words tree-sitter-bash hangs on redirections, heredoc delimiters.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.model import Script
from guard._policy.bash.walker import analyze


def run(command: str) -> Script:
    return analyze(command, cwd="/w", home="/h")


def argvs(command: str) -> list[list[str | None]]:
    return [[w.value for w in c.argv] for c in run(command).commands if c.argv]


def checks(command: str) -> list[str]:
    return [f.check for f in run(command).findings]


def bare_redirections(command: str) -> list[tuple[str, list[str | None], list[str | None]]]:
    """The argv-less commands a redirection adds: cwd, files written, files read."""
    return [
        (c.cwd, [w.value for w in c.redirect_writes], [w.value for w in c.redirect_reads])
        for c in run(command).commands
        if not c.argv and (c.redirect_writes or c.redirect_reads)
    ]


# -- a comment inside a command node ---------------------------------------------------------------
# tree-sitter-bash reads "A=1 B=2 # note" and the next line as ONE command node with the comment
# in it; bash runs the assignments, then the next line's command.
@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("A=1 B=2 # note\nrm -rf build", ["rm", "-rf", "build"]),
        ("A=1 B=2 # note\nls -la", ["ls", "-la"]),
        ("A=1 B=$(date) # note\nrm -rf build", ["rm", "-rf", "build"]),
    ],
)
def test_the_command_after_assignments_and_a_comment_is_analysed(
    command: str, argv: list[str]
) -> None:
    assert argvs(command)[-1] == argv
    assert "dynamic-command" not in checks(command)


def test_a_comment_between_assignments_and_a_command_is_not_a_word(
    bash: Callable[[str], Verdict],
) -> None:
    assert bash("A=1 B=2 # note\nls").verdict == "allow"
    verdict = bash("A=1 B=2 # note\nrm -rf build")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.rm",)


# -- prefix redirections ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "bare"),
    [
        (">out echo hi", [("/w", ["out"], [])]),
        ("2>err <in cat", [("/w", ["err"], ["in"])]),
        ("cd /x && >out echo hi", [("/x", ["out"], [])]),
        ("cd sub && A=1 2>log ls", [("/w/sub", ["log"], [])]),
    ],
)
def test_a_prefix_redirection_is_recorded_where_the_command_runs(
    command: str, bare: list[tuple[str, list[str], list[str]]]
) -> None:
    assert bare_redirections(command) == bare


def test_a_prefix_redirection_resolves_against_the_current_directory(
    bash: Callable[[str], Verdict],
) -> None:
    assert bash(">out echo hi").verdict == "allow"
    verdict = bash("cd /etc && >passwd echo hi")
    assert verdict.verdict == "block"
    assert verdict.rule_ids == ("builtin.runs-outside-sandbox",)
    assert verdict.targets == ("/etc/passwd",)


@pytest.mark.parametrize(
    "command",
    ["2>&- rm -rf build", ">&- rm -rf build", "<&- rm -rf build", "A=1 2>&- rm -rf build"],
)
def test_a_command_after_a_closed_descriptor_prefix_is_analysed(command: str) -> None:
    assert argvs(command) == [["rm", "-rf", "build"]]
    assert bare_redirections(command) == []


# -- words tree-sitter-bash hangs on a redirection -------------------------------------------------
@pytest.mark.parametrize(
    ("command", "argv", "written"),
    [
        ("cat <<EOF >a x >g y\nz\nEOF", ["cat", "x", "y"], ["a", "g"]),
        ("cat <<EOF >a x y >g z\nz\nEOF", ["cat", "x", "y", "z"], ["a", "g"]),
        ("cat 2>e p <<EOF >a x >g y\nz\nEOF", ["cat", "p", "x", "y"], ["e", "a", "g"]),
    ],
)
def test_words_after_every_redirection_next_to_a_heredoc_are_arguments(
    command: str, argv: list[str], written: list[str]
) -> None:
    assert argvs(command) == [argv]
    assert bare_redirections(command) == [("/w", written, [])]


@pytest.mark.parametrize(
    "command",
    [">f <g x=$(rm -rf build)", "2>e <g x=$(rm -rf build)", "&>>f <g x=$(rm -rf build)"],
)
def test_a_substitution_after_a_redirection_without_a_command_runs(
    command: str, bash: Callable[[str], Verdict]
) -> None:
    assert argvs(command) == [["rm", "-rf", "build"]]
    assert "builtin.rm" in bash(command).rule_ids


def test_a_substitution_after_a_redirection_in_a_broken_script_runs(
    bash: Callable[[str], Verdict],
) -> None:
    command = "cat <<E >f $(rm -rf y) (function"
    assert argvs(command) == [["cat"], ["rm", "-rf", "y"]]
    assert bare_redirections(command) == [("/w", ["f"], [])]
    assert checks(command) == ["parse-error", "parse-error"]
    assert bash(command).rule_ids == ("builtin.parse-error", "builtin.rm")


# -- heredoc delimiters ----------------------------------------------------------------------------
@pytest.mark.parametrize("delimiter", ["XEOF", "EOFX", "X", "END"])
def test_an_unquoted_heredoc_runs_its_backquotes_whatever_its_delimiter(delimiter: str) -> None:
    command = f"cat <<{delimiter}\n`rm -rf build`\n{delimiter}"
    assert argvs(command) == [["rm", "-rf", "build"], ["cat"]]


@pytest.mark.parametrize("delimiter", ["'XEOF'", '"XEOF"', "\\XEOF"])
def test_a_quoted_heredoc_leaves_its_backquotes_as_text(delimiter: str) -> None:
    command = f"cat <<{delimiter}\n`rm -rf build`\nXEOF"
    assert argvs(command) == [["cat"]]
