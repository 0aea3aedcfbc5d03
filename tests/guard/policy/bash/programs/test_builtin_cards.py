"""The shell's builtins, ``echo``/``printf`` and ``perl`` have cards: what they name and what
bash evaluates in them is their card's, and a builtin that changes how later words are read
asks however it is reached. A hostile model hides a command in what a builtin evaluates."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.operands.touches import SHAPES
from guard._policy.bash.programs import card_for, touched
from guard._policy.bash.walker import analyze

_WRAPPED = ("{0}", "env {0}", "timeout 5 {0}", "command {0}", "bash -c {1}", "nice -n 1 {0}")


_BUILTINS = (
    *("alias", "shopt", "enable", "hash", "set", "export", "declare", "typeset", "local"),
    *("readonly", "read", "mapfile", "readarray", "getopts", "printf", "unset", "let", "test"),
    *("kill", "eval", "trap", "echo", "cd", "pushd", "popd", "source", ".", "perl", "true"),
)


@pytest.mark.parametrize("program", _BUILTINS)
def test_a_builtin_has_a_card_and_no_row_left(program: str) -> None:
    assert card_for(program) is not None
    assert program not in SHAPES


@pytest.mark.parametrize(
    "command",
    [
        "alias ls='rm -rf ~'",
        "shopt -s expand_aliases",
        "enable -f ./x.so x",
        "hash -p /tmp/x ls",
        "unset 'a[$(rm -rf ~)]'",
        "declare -i n='a[$(rm -rf ~)]'",
        "printf -v 'a[$(rm -rf ~)]' %s x",
        "mapfile -C 'rm -rf ~' x < notes.txt",
        "kill $PID",
        "export BASH_ENV=./x.sh",
        "perl -i -pe s/a/b/ ~/.bashrc",
    ],
)
@pytest.mark.parametrize("wrapper", _WRAPPED)
def test_what_a_builtin_evaluates_asks_however_it_is_reached(
    bash: Callable[[str], Verdict], command: str, wrapper: str
) -> None:
    spelled = wrapper.format(command, shlex.quote(command))
    assert bash(spelled).verdict != "allow", spelled


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("echo --in -rf /", [("--in", True, False), ("-rf", True, False), ("/", True, False)]),
        ("true ~/.ssh/id_rsa", []),
        ("cd ~/.ssh", [("~/.ssh", True, False)]),
        # without -i perl is read like a program nothing is known of
        ("perl -e 'print 1' a.txt", [("'print 1'", True, True), ("a.txt", True, True)]),
    ],
)
def test_a_builtins_words_are_read_as_its_card_says(
    command: str, words: list[tuple[str, bool, bool]]
) -> None:
    [parsed] = analyze(command, cwd="/w", home="/h").commands
    assert [(w.raw, u.read, u.write) for w, u in touched(parsed)] == words


def test_a_file_sourced_or_run_by_perl_after_it_is_written_asks(
    bash: Callable[[str], Verdict],
) -> None:
    for runner in ("source", ".", "perl"):
        command = f"echo 'rm -rf ~' > x.sh && {runner} x.sh"
        assert bash(command).verdict != "allow", command


@pytest.mark.parametrize(
    "command",
    [
        "node -e 'require(\"fs\").rmSync(process.env.HOME, {recursive: true})'",
        "nodejs --eval 'process.exit(1)' x",
        "deno eval 'Deno.removeSync(\"/\")'",
        "ruby -e 'system(\"rm -rf ~\")'",
        "php -r 'system(\"rm -rf ~\");'",
        "lua -e 'os.execute(\"rm -rf ~\")'",
        "perl -e 'system(\"rm -rf ~\")'",
        "perl -E 'say 1; system(\"id\")'",
    ],
)
@pytest.mark.parametrize("wrapper", _WRAPPED)
def test_the_code_an_interpreters_card_names_is_read_however_it_is_reached(
    bash: Callable[[str], Verdict], command: str, wrapper: str
) -> None:
    spelled = wrapper.format(command, shlex.quote(command))
    verdict = bash(spelled)
    assert verdict.verdict != "allow", spelled
    assert "builtin.inline-code" in verdict.rule_ids, (spelled, verdict.rule_ids)


@pytest.mark.parametrize("program", ["node", "nodejs", "deno", "ruby", "php", "lua", "perl"])
def test_an_interpreter_with_inline_code_has_it_on_its_card(program: str) -> None:
    card = card_for(program)
    assert card is not None
    assert card.inline_code
    assert card.runs_files
    assert program not in SHAPES
