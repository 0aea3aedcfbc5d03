"""The syntax walk itself: statements, words, working directories and the command limit.

What each kind of word resolves to (or None when only known at runtime), which commands a
substitution contributes, where ``cd`` inside a subshell/function/substitution stops having
effect, prefix ``IFS=``, parse errors and the 2000-command bound.
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


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in run(command).findings]


# -- words -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("plain", "plain"),
        ("'raw string'", "raw string"),
        ("''", ""),
        ('"dq $HOME"', "dq /h"),
        ('"a\\"b"', 'a"b'),
        ('a"b"c', "abc"),
        ("a'b'\"c\"", "abc"),
        ("$'a\\tb'", "a\tb"),
        ("$'\\x72m'", "rm"),
        ('$"translated"', "translated"),
        ("5", "5"),
        ("x\\ y", "x y"),
        ("$'\\u0072m'", None),
        ("$'\\q'", None),
        ("$((1+2))", None),
        ("$[1+2]", None),
        ("$(ls)", None),
        ('"$(ls)"', None),
        ("<(ls)", None),
        ("$x", None),
        ("pre$x", None),
    ],
)
def test_a_word_resolves_to_its_static_text_or_none(word: str, value: str | None) -> None:
    assert argvs("echo " + word)[-1] == ["echo", value]


@pytest.mark.parametrize(
    ("word", "glob", "brace"),
    [
        ("a*b", True, False),
        ("a?", True, False),
        ("[ab]c", True, False),
        ('"c*"', False, False),
        ("'c?'", False, False),
        ("{a,b}", False, True),
        ("x{1..3}", False, True),
        ('"{a,b}"', False, False),
        ("plain", False, False),
    ],
)
def test_globs_and_braces_are_flagged_only_outside_quotes(
    word: str, glob: bool, brace: bool
) -> None:
    command = run("rm " + word).commands[-1]
    assert (command.argv[1].glob, command.argv[1].brace) == (glob, brace)


def test_a_substitutions_commands_are_the_words_inner_commands() -> None:
    command = run('echo $(rm x) "$(ls)" <(cat f) `pwd`').commands[-1]
    inner = [[c.argv[0].value for c in w.inner] for w in command.argv[1:]]
    assert inner == [["rm"], ["ls"], ["cat"], ["pwd"]]
    assert [w.value for w in command.argv[1:]] == [None, None, None, None]


def test_substitutions_inside_arithmetic_run() -> None:
    assert argvs("echo $(( $(rm q) + 1 ))") == [["rm", "q"], ["echo", None]]


def test_a_non_bmp_character_is_read_as_a_replacement_character() -> None:
    assert argvs("echo \U0001f600 {\U0001f600} a\U0001f600b") == [
        ["echo", "\ufffd", "{\ufffd}", "a\ufffdb"]
    ]


# -- statements --------------------------------------------------------------------------------
def test_an_assignment_value_is_kept_as_a_named_path() -> None:
    script = run("A=/data B=")
    assert [[w.value for w in c.named] for c in script.commands] == [["/data"]]
    assert [c.argv for c in script.commands] == [()]


def test_an_assignment_runs_its_substitutions() -> None:
    assert argvs("A=$(rm -rf x)") == [["rm", "-rf", "x"]]


@pytest.mark.parametrize(
    "command",
    [
        "(cd /tmp); rm x",
        "f() { cd /tmp; }; rm x",
        "echo $(cd /tmp); rm x",
        "cat <(cd /tmp); rm x",
        "A=$(cd /tmp) rm x",
    ],
)
def test_cd_inside_a_subshell_function_or_substitution_does_not_leak(command: str) -> None:
    assert [c.cwd for c in run(command).commands if c.program == "rm"] == ["/w"]


def test_cd_inside_a_subshell_applies_within_it() -> None:
    assert [c.cwd for c in run("(cd /tmp; rm x)").commands if c.program == "rm"] == ["/tmp"]


def test_a_function_body_is_analysed_but_not_its_name() -> None:
    assert argvs("cleanup() { rm -rf build; }") == [["rm", "-rf", "build"]]


def test_a_subshell_and_a_substitution_both_read_the_pipe() -> None:
    # bash runs $(…) with the stdin of the command around it: here the pipe.
    assert ["rm", "-rf", "x"] in argvs("echo 'rm -rf x' | (bash)")
    assert ["rm", "-rf", "x"] in argvs("echo 'rm -rf x' | echo $(bash)")


def test_a_redirection_alone_in_a_substitution_reads_its_file() -> None:
    script = run("echo $(< list)")
    assert [[w.value for w in c.redirect_reads] for c in script.commands] == [["list"], []]


def test_comments_are_not_commands_or_words() -> None:
    assert argvs("ls # rm -rf x\n# rm y") == [["ls"]]
    assert argvs("ls a \\\n# c") == [["ls", "a"]]


# -- simple commands ---------------------------------------------------------------------------
def test_a_prefix_ifs_only_affects_its_command() -> None:
    assert findings("IFS=: read a b") == []
    assert argvs("IFS=: read a b") == [["read", "a", "b"]]


def test_a_prefix_ifs_still_runs_its_substitutions() -> None:
    assert argvs("IFS=$(rm -rf q) read a") == [["rm", "-rf", "q"], ["read", "a"]]


def test_ifs_assigned_alone_changes_later_commands() -> None:
    assert [check for check, _ in findings("IFS=:")] == ["shell-environment"]
    assert [check for check, _ in findings("IFS=: ; ls")] == ["shell-environment"]


def test_other_prefix_assignments_are_still_checked() -> None:
    assert [check for check, _ in findings("PATH=/x read a")] == ["shell-environment"]
    assert [check for check, _ in findings("IFS=: PATH=/x read a")] == ["shell-environment"]


def test_an_input_redirection_marks_only_its_own_command() -> None:
    script = run("cat < in; ls")
    assert [(c.argv[0].value, c.stdin_file) for c in script.commands if c.argv] == [
        ("cat", True),
        ("ls", False),
    ]
    assert [c.stdin_file for c in script.commands if not c.argv] == [False]


# -- whole scripts -----------------------------------------------------------------------------
def test_a_script_that_does_not_parse_is_a_finding() -> None:
    assert findings("rm 'unterminated") == [
        ("parse-error", "the command does not parse as bash: rm 'unterminated")
    ]


def test_a_broken_arithmetic_is_also_read_as_a_nested_subshell() -> None:
    assert ["rm", "-rf", "x"] in argvs("echo $((rm -rf x))")
    assert [check for check, _ in findings("echo $((rm -rf x))")] == ["parse-error"]


def test_valid_arithmetic_is_not_read_twice() -> None:
    assert argvs("echo $((1 + 2)); ls") == [["echo", None], ["ls"]]


def test_a_line_continuation_inside_a_word_is_unresolved() -> None:
    assert findings("r\\\nm -rf x") == [
        ("unresolved", "a line continuation splits a word (bash joins it): r\\ m -rf x")
    ]


def test_a_broken_arithmetic_in_a_parse_error_asks(bash: Callable[[str], Verdict]) -> None:
    verdict = bash("echo $((git reset --hard))")
    assert verdict.verdict == "confirm"
    assert "builtin.git-reset-hard" in verdict.rule_ids


# -- the command limit -------------------------------------------------------------------------
def test_two_thousand_commands_are_all_kept() -> None:
    script = run("a;" * 2000)
    assert len(script.commands) == 2000
    assert script.findings == []


def test_the_two_thousand_and_first_command_is_too_complex_once() -> None:
    script = run("a;" * 2005)
    assert len(script.commands) == 2000
    assert [(f.check, f.detail) for f in script.findings] == [
        ("too-complex", "more than 2000 simple commands")
    ]


def test_too_many_commands_asks(bash: Callable[[str], Verdict]) -> None:
    verdict = bash("ls;" * 2001)
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.too-complex",)


# -- redirections in odd places ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "argv", "written", "read"),
    [
        ("<in cat", ["cat"], [], ["in"]),
        (">out echo hi", ["echo", "hi"], ["out"], []),
        ("2>/dev/null git reset --hard", ["git", "reset", "--hard"], ["/dev/null"], []),
    ],
)
def test_a_redirection_before_the_command_name_is_recorded(
    command: str, argv: list[str], written: list[str], read: list[str]
) -> None:
    script = run(command)
    assert argvs(command) == [argv]
    assert [w.value for c in script.commands for w in c.redirect_writes] == written
    assert [w.value for c in script.commands for w in c.redirect_reads] == read


def test_an_input_redirection_before_the_command_name_is_its_stdin() -> None:
    assert [c.stdin_file for c in run("<in cat").commands if c.argv] == [True]


@pytest.mark.parametrize(
    ("command", "written", "read"),
    [("echo $(< list)", [], ["list"]), ("echo $(> out)", ["out"], [])],
)
def test_a_redirection_alone_in_a_substitution_is_recorded_where_it_runs(
    command: str, written: list[str], read: list[str]
) -> None:
    script = run("cd sub; " + command)
    alone = [c for c in script.commands if not c.argv]
    assert [
        ([w.value for w in c.redirect_writes], [w.value for w in c.redirect_reads]) for c in alone
    ] == [(written, read)]
    assert [(c.argv, c.cwd) for c in alone] == [((), "/w/sub")]


def test_a_pipeline_inside_a_piped_subshell_reads_the_outer_pipe() -> None:
    assert ["rm", "-rf", "x"] in argvs("echo 'rm -rf x' | ( bash | cat )")


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ('"rm" x', ["rm", "x"]),
        ("'rm' -rf x", ["rm", "-rf", "x"]),
        ('r"m" x', ["rm", "x"]),
        ("\\rm x", ["rm", "x"]),
        ("$CMD x", [None, "x"]),
    ],
)
def test_a_quoted_command_name_is_unquoted(command: str, argv: list[str | None]) -> None:
    assert argvs(command) == [argv]


@pytest.mark.parametrize("prefix", ["", "bash -c '"])
def test_pushd_and_popd_move_where_later_paths_resolve(prefix: str) -> None:
    command = "pushd /tmp; rm x; popd; rm y"
    command = prefix + command + ("'" if prefix else "")
    cwds = [(c.argv[-1].value, c.cwd) for c in run(command).commands if c.program == "rm"]
    assert cwds == [("x", "/tmp"), ("y", "/w")]
