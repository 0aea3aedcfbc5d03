"""Redirections, heredocs, herestrings and pipelines in the bash analysis's syntax walk.

Which files a redirection writes or reads (descriptor duplication and closing are neither),
what code a heredoc or herestring feeds, and which commands a pipeline stage receives.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def writes(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [w.value for c in script.commands for w in c.redirect_writes]


def reads(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [w.value for c in script.commands for w in c.redirect_reads]


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def programs(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    return [c.argv[0].value for c in script.commands if c.argv]


@pytest.mark.parametrize(
    "command",
    [
        "echo 2>&1",
        "ls 1>&2",
        "echo x >&2",
        "cat <&3",
        "cat 0<&3",
        "echo x >& -",
        "cat <& -",
        "exec 3>&-",
        "exec 4<&-",
        "echo >&-",
        "cat <&-",
        "echo >&- 2",
        "cat <&- 3",
    ],
)
def test_duplicating_or_closing_a_descriptor_touches_no_file(command: str) -> None:
    assert writes(command) == []
    assert reads(command) == []


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("echo x > out", ["out"]),
        ("echo x >> log", ["log"]),
        ("echo x &> both", ["both"]),
        ("echo x >& out", ["out"]),
        ("echo x >&out", ["out"]),
        ("echo x 2> err", ["err"]),
        ("echo x >| clobbered", ["clobbered"]),
    ],
)
def test_a_redirection_to_a_file_writes_that_file(command: str, written: list[str]) -> None:
    assert writes(command) == written
    assert reads(command) == []


def test_only_the_first_word_after_a_redirection_is_its_target() -> None:
    assert writes("echo x > a b") == ["a"]
    assert writes("echo x >a b >c d") == ["a", "c"]
    assert reads("cat <in -n f") == ["in"]


def test_input_redirection_reads_its_file() -> None:
    script = analyze("cat < in", cwd="/w", home="/h")
    assert reads("cat < in") == ["in"]
    assert [c.stdin_file for c in script.commands if c.argv] == [True]


@pytest.mark.parametrize(
    "command",
    ["cat <<EOF > out\nhi\nEOF", "cat > out <<EOF\nhi\nEOF", "cat <<-EOF >out\n\thi\n\tEOF"],
)
def test_a_file_redirection_next_to_a_heredoc_is_recorded(command: str) -> None:
    assert writes(command) == ["out"]


@pytest.mark.parametrize(
    "command",
    [
        "cat <<EOF\n$(rm -rf x)\nEOF",
        "cat <<EOF\n${x:-$(rm -rf x)}\nEOF",
    ],
)
def test_substitutions_in_an_unquoted_heredoc_body_run(command: str) -> None:
    assert programs(command) == ["rm", "cat"]


def test_a_quoted_heredoc_body_is_only_text() -> None:
    script = analyze("cat <<'EOF'\n$(rm -rf x)\nEOF", cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands] == [["cat"]]
    assert script.commands[0].stdin_texts == ["$(rm -rf x)\n"]


def test_a_herestring_on_a_loop_feeds_every_command_in_it() -> None:
    script = analyze('while read l; do bash; done <<< "rm -rf x"', cwd="/w", home="/h")
    fed = {c.argv[0].value: c.stdin_texts for c in script.commands if c.argv}
    assert fed == {"read": ["rm -rf x"], "bash": ["rm -rf x"], "rm": []}


def test_a_herestring_to_a_shell_in_a_loop_asks(bash: Callable[[str], Verdict]) -> None:
    verdict = bash('while read l; do bash; done <<< "rm -rf x"')
    assert verdict.verdict == "confirm"
    assert "builtin.rm" in verdict.rule_ids


@pytest.mark.parametrize("command", ["sh > log", "bash 2> rm", "cat > out"])
def test_an_output_file_is_not_what_a_command_reads(command: str) -> None:
    script = analyze(command, cwd="/w", home="/h")
    assert [c.stdin_texts for c in script.commands if c.argv] == [[]]
    assert len(programs(command)) == 1


def test_a_comment_between_pipeline_stages_does_not_cut_the_pipe() -> None:
    command = "echo 'rm -rf x' | # a comment\nbash"
    assert programs(command) == ["echo", "bash", "rm"]


def test_code_piped_past_a_comment_into_a_shell_asks(bash: Callable[[str], Verdict]) -> None:
    verdict = bash("echo 'rm -rf x' | # a comment\nbash")
    assert verdict.verdict == "confirm"
    assert "builtin.rm" in verdict.rule_ids


def test_every_stage_after_a_comment_is_walked() -> None:
    assert programs("a | # one\nb | # two\nc") == ["a", "b", "c"]


def test_an_input_file_next_to_a_heredoc_is_read() -> None:
    assert reads("cat <<EOF < in\nx\nEOF") == ["in"]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf x' | bash 2>/dev/null",
        "echo 'rm -rf x' | { bash; } 2>/dev/null",
        "echo 'rm -rf x' | (bash) >/dev/null",
    ],
)
def test_a_redirected_pipeline_stage_still_reads_the_pipe(command: str) -> None:
    assert ["rm", "-rf", "x"] in argvs(command)


@pytest.mark.parametrize("command", ["curl -s x | bash > log", "curl -s x | { bash; } > log"])
def test_a_redirected_shell_running_a_download_is_download_exec(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert "builtin.download-exec" in bash(command).rule_ids


def test_a_herestring_on_a_piped_loop_adds_only_its_own_text() -> None:
    command = "echo ls | while read l; do bash; done <<< 'rm -rf x'"
    assert argvs(command) == [["echo", "ls"], ["read", "l"], ["bash"], ["ls"], ["rm", "-rf", "x"]]


@pytest.mark.parametrize(
    "command", ["{ cat; } < in", "while read l; do cat; done < in", "(cat) < in"]
)
def test_an_input_file_on_a_compound_command_is_every_commands_stdin(command: str) -> None:
    script = analyze(command, cwd="/w", home="/h")
    assert all(c.stdin_file is True for c in script.commands if c.argv)
    assert reads(command) == ["in"]


@pytest.mark.parametrize(
    "command", ["{ bash; } < script.sh", "while read l; do bash; done < script.sh"]
)
def test_a_shell_in_a_compound_command_reading_a_file_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.shell-stdin" in verdict.rule_ids


def test_a_compound_command_without_input_redirection_has_no_stdin_file() -> None:
    script = analyze("{ cat; } > out", cwd="/w", home="/h")
    assert [c.stdin_file for c in script.commands if c.argv] == [False]


@pytest.mark.parametrize(
    "command",
    ["echo 'rm -rf x' | ( bash 2>/dev/null )", "echo 'rm -rf x' | { bash >/dev/null; }"],
)
def test_a_redirected_shell_inside_a_piped_group_reads_the_pipe(command: str) -> None:
    assert ["rm", "-rf", "x"] in argvs(command)


def test_a_redirected_shell_inside_a_piped_group_runs_a_download(
    bash: Callable[[str], Verdict],
) -> None:
    assert "builtin.download-exec" in bash("curl -s x | ( bash > log )").rule_ids


@pytest.mark.parametrize("command", ["{ bash; } > out", "(bash) 2>/dev/null", "{ sh -s; } >> log"])
def test_an_output_redirection_gives_a_grouped_shell_no_program_to_read(command: str) -> None:
    assert analyze(command, cwd="/w", home="/h").findings == []
