"""awk programs the bash analysis lets pass: the tiny grammar, regex literals, the length cap.

Each case goes through :func:`analyze`; an ``inline-code`` finding means the guard asks.
A ``/`` where an awk regex may start opens a regex literal whose body is skipped (so
``[``, ``^`` or a reserved word inside it are fine); elsewhere ``/`` is division. An
unterminated regex, a reserved word such as ``system``, or a program over 500 characters
asks.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.walker import analyze

AWK_LENGTH_LIMIT = 500


def awk_checks(program: str) -> list[str]:
    command = "awk " + shlex.quote(program) + " data.txt"
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "program",
    [
        "{print $1}",
        "{print $1, $3}",
        "NR==1",
        "NR>=2 && NF",
        "{s+=$1} END {print s}",
        'BEGIN {FS=","} {printf "%s\\n", toupper($2)}',
        "/^[0-9]+$/ {print $1}",
        "/system/",
        "/getline|ENVIRON/ {print}",
        "$1 ~ /^a[0-9]/ {print}",
        "$2 !~ /^#/",
        "NR >= 2 && /^[a-z]+$/",
        "!/^$/",
        "{ if ($1 < 2) print } /^x[y]/ { print NR }",
        "{print NR/2}",
        "{print $1 / $2}",
        "/a\\/b/ {print}",
    ],
)
def test_programs_in_the_small_grammar_pass_without_asking(program: str) -> None:
    assert awk_checks(program) == []


@pytest.mark.parametrize(
    "program",
    [
        'BEGIN {system("rm -rf build")}',
        '{print > ".env"}',
        '{print | "sh"}',
        '{getline line < "x"}',
        '{print ENVIRON["HOME"]}',
        '/x {system("rm -rf build")}',
        "/unterminated",
        "{print $1} /a",
        "{print}^",
        "NR > 1",
        '@include "x"',
    ],
)
def test_programs_outside_the_grammar_ask(program: str) -> None:
    assert awk_checks(program) == ["inline-code"]


def test_program_of_exactly_the_length_limit_passes() -> None:
    program = "{print $1}".ljust(AWK_LENGTH_LIMIT)
    assert len(program) == AWK_LENGTH_LIMIT
    assert awk_checks(program) == []


def test_program_one_over_the_length_limit_asks() -> None:
    program = "{print $1}".ljust(AWK_LENGTH_LIMIT + 1)
    assert awk_checks(program) == ["inline-code"]
