"""sed scripts and SQL given to database clients in the bash analysis.

The sed script is the ``-e`` values, or else the first operand unless ``-f`` gives a file;
a script read from a stream asks. SQL comes from options, from operands after the database
(sqlite3, duckdb) and from here-strings/here-documents; each piece goes to the allowlist.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "sed -n p f",
        "gsed -n p f",
        "sed -n 1p notes.txt",  # only the first operand is the script
        "sed -f x.sed notes.txt",  # with -f, every operand is an input file
        "sed -f x.sed -n",
        "sed --line-length 80 p notes.txt",
        "sed -l 80 p notes.txt",
        "sed -e p -f x.sed notes.txt",
        "sed --expression=p notes.txt",
    ],
)
def test_plain_sed_scripts_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "script"),
    [
        ("sed 's/a/b/e' f", "s/a/b/e"),
        ("sed -n 'w out' f", "w out"),
        ("sed -e p -e 'r /etc/shadow' f", "r /etc/shadow"),
        ("sed - 's/a/b/e'", "-"),  # a lone '-' is an operand, so it is the script here
    ],
)
def test_sed_scripts_outside_the_allowlist_are_inline_sed_code(command: str, script: str) -> None:
    assert findings(command) == [("inline-code", "inline sed code: " + script)]


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("sed -f - x", "-"),
        ("sed -f /dev/stdin x", "/dev/stdin"),
        ("sed --file=/proc/self/fd/0 x", "--file=/proc/self/fd/0"),
        ('sed -f "$s" x', '"$s"'),
    ],
)
def test_sed_script_read_from_a_stream_asks(command: str, raw: str) -> None:
    assert findings(command) == [("shell-stdin", "sed reads its program from a stream: " + raw)]


def test_sed_script_strings_are_kept_as_code_strings() -> None:
    script = analyze("sed \"s/x/'y'/\" f", cwd="/w", home="/h")
    assert [c.code_strings for c in script.commands] == [("y",)]


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 db 'select 1'",
        "sqlite3 -init setup.sql db 'select 1'",  # -init takes a value: db is the database
        "sqlite3 -cmd 'select 1' db 'select 2'",
        "sqlite3 -separator , db 'select 1'",
        "sqlite3 -nullvalue NULL db 'select 1'",
        "sqlite3 db <<< 'select 1'",
        "duckdb db 'select 1'",
    ],
)
def test_reading_sql_has_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "sql"),
    [
        ("sqlite3 db 'drop table x'", "drop table x"),
        ("sqlite3 -init setup.sql db 'drop table x'", "drop table x"),
        ("sqlite3 db <<< 'drop table x'", "drop table x"),
        ("psql <<EOF\ndrop table x;\nEOF", "drop table x;"),
        ("psql -c 'drop table x'", "drop table x"),
        ("mysql --execute='drop table x'", "drop table x"),
    ],
)
def test_sql_outside_the_allowlist_is_inline_sql_code(command: str, sql: str) -> None:
    assert findings(command) == [("inline-code", "inline sql code: " + sql)]


@pytest.mark.parametrize(
    "command",
    [
        "sed -ep notes.txt",  # -eSCRIPT: the script is glued to the option
        "sed --expression p notes.txt",
        "psql -c'select 1'",
    ],
)
def test_glued_and_separate_option_values_are_the_code(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('sed "$s" f', [("dynamic-script", 'sed code built at runtime: "$s"')]),
        ("sed -n -e", [("dynamic-script", "sed code built at runtime: ")]),  # no value at all
        (
            'sed -e "$x" -e "s/a/b/e" f',  # a runtime value does not end the scan
            [
                ("dynamic-script", 'sed code built at runtime: "$x"'),
                ("inline-code", "inline sed code: s/a/b/e"),
            ],
        ),
    ],
)
def test_code_only_known_at_runtime_asks(command: str, expected: list[tuple[str, str]]) -> None:
    assert findings(command) == expected


def test_an_option_value_keeps_everything_after_the_first_equals_sign() -> None:
    assert findings("psql --command='update t set a=1'") == [
        ("inline-code", "inline sql code: update t set a=1")
    ]
