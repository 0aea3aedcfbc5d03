"""Which check each program gets in the bash analysis (``check_program``).

Every program name of a family reaches its check (``gsed``, ``mawk``, ``gmake``, each SQL
client …); ``kill``/``pkill``/``killall`` of a runtime target cannot be decided; options that
carry code or name a program (``vim -c``/``+cmd``, ``rsync -e``, ``sort
--compress-program`` …) ask with the option named as written.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize("program", ["sed", "gsed"])
def test_every_sed_name_gets_the_sed_check(program: str) -> None:
    assert findings(f"{program} 's/a/b/e' f") == [("inline-code", "inline sed code: s/a/b/e")]
    assert findings(f"{program} -n p f") == []


@pytest.mark.parametrize("program", ["awk", "gawk", "mawk", "nawk", "busybox-awk"])
def test_every_awk_name_gets_the_awk_check(program: str) -> None:
    assert findings(f"{program} 'BEGIN{{system(1)}}'") == [
        ("inline-code", "inline awk code: BEGIN{system(1)}")
    ]
    assert findings(f"{program} '{{print}}' f") == []


@pytest.mark.parametrize(
    "command",
    [
        "psql -c 'drop table x'",
        "pgcli -c 'drop table x'",
        "mysql -e 'drop table x'",
        "mariadb -e 'drop table x'",
        "mycli -e 'drop table x'",
        "sqlite3 -cmd 'drop table x'",
        "litecli -e 'drop table x'",
        "duckdb -c 'drop table x'",
        "duckdb -s 'drop table x'",
        "sqlcmd -Q 'drop table x'",
        "sqlcmd -q 'drop table x'",
        "clickhouse-client --query='drop table x'",
        "cqlsh -e 'drop table x'",
    ],
)
def test_every_sql_client_hands_its_sql_to_the_allowlist(command: str) -> None:
    assert findings(command) == [("inline-code", "inline sql code: drop table x")]


@pytest.mark.parametrize("program", ["make", "gmake"])
def test_every_make_name_gets_the_make_check(program: str) -> None:
    assert findings(f"{program} --eval=x") == [
        ("inline-code", "make --eval runs inline make code: --eval=x")
    ]


@pytest.mark.parametrize("command", ["kill $pid", 'kill -9 "$pid"', 'pkill "$n"', "killall $n"])
def test_signalling_processes_only_known_at_runtime_is_unresolved(command: str) -> None:
    program = command.split()[0]
    assert findings(command) == [
        ("unresolved", f"{program} signals processes only known at runtime")
    ]


@pytest.mark.parametrize(
    "command", ["kill 123", "kill -9 123", "pkill -f myserver", "killall node", 'echo "$x"']
)
def test_written_out_targets_and_other_programs_are_not_unresolved(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("bun -e 1", "-e"),
        ("osascript -e x", "-e"),
        ("Rscript -e 1", "-e"),
        ("R -e 1", "-e"),
        ("julia --eval=1", "--eval=1"),
        ("julia --eval='x=1'", "--eval=x=1"),  # the option is what stands before the first =
        ("pwsh -Command x", "-Command"),
        ("powershell -EncodedCommand x", "-EncodedCommand"),
        ("vim -c q f", "-c"),
        ("vim +q f", "+q"),
        ("vi --cmd q f", "--cmd"),
        ("vi +q f", "+q"),
        ("nvim -l x.lua", "-l"),
        ("nvim +q f", "+q"),
        ("ex -S s", "-S"),
        ("ex +q f", "+q"),
        ("view +x f", "+x"),
        ("emacs --eval='(x)'", "--eval=(x)"),
        ("guile -c x", "-c"),
        ("sbcl --script x", "--script"),
        ("racket -e x", "-e"),
        ("elixir -e x", "-e"),
        ("erl -eval x", "-eval"),
        ("ghc -e x", "-e"),
        ("groovy -e x", "-e"),
        ("scala -e x", "-e"),
        ("gawk --load=x '{print}'", "--load=x"),
        ("awk -E prog.awk", "-E"),
        ("sort --compress-program=gzip f", "--compress-program=gzip"),
        ("split --filter=x f", "--filter=x"),
        ("man -P cat ls", "-P"),
        ("less -o log f", "-o"),
        ("rsync -e ssh a b", "-e"),
        ("rsync --rsh=ssh a b", "--rsh=ssh"),
        ("scp -S x a b", "-S"),
        ("zip -T a.zip f", "-T"),
        ("tclsh -c x", "-c"),
        ("wish -c x", "-c"),
    ],
)
def test_options_that_carry_code_or_name_a_program_ask(command: str, shown: str) -> None:
    program = command.split()[0]
    assert (
        "inline-code",
        f"{program} {shown} runs code or another program",
    ) in findings(command)


@pytest.mark.parametrize(
    "command",
    [
        "vim f",
        "less +F f",  # '+' commands only count for the vi family
        "man ls",
        "rsync -a a b",
        "sort -u f",
        "scp a b",
        "zip -r a.zip d",
        'vim "$f"',
    ],
)
def test_the_same_programs_without_such_options_have_no_finding(command: str) -> None:
    assert findings(command) == []


def test_the_first_code_option_is_named() -> None:
    assert findings("vim -c q --cmd w f") == [
        ("inline-code", "vim -c runs code or another program")
    ]
