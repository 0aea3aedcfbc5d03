"""sed scripts the bash analysis lets pass, and what makes them ask.

Each case goes through :func:`analyze`; an ``inline-code`` finding means the guard asks.
The script is read command by command: addresses (line numbers, ``first~step``, ``$``,
``/re/`` or ``\\cREc`` with ``I``/``M`` flags, ranges with ``,N``, ``,+N``, ``,~N``), then
one command. ``s``/``y`` take any delimiter but a backslash or a newline and need all their
delimited parts; ``s`` flags are limited to ``gpiIM`` and digits; comments and ``a``/``i``/
``c`` text run to the end of their line; labels to ``;`` or a newline. ``e``, ``w``, ``r``,
an ``s///e`` or ``s///w`` flag, or anything not understood asks.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.walker import analyze


def sed_checks(script: str) -> list[str]:
    command = "sed " + shlex.quote(script) + " data.txt"
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "script",
    [
        "s/a/b/",
        "s/a/b/g",
        "s/a/b/gI",
        "s/a/b/2",
        "s/a/b/ g",
        "s/x/y/p",
        "s|a|b|",
        "sXaXbX",
        "s,a\\,c,b,",
        "s/a\\/b/c/",
        "s/\\\\/x/",
        "s//b/",
        "s/a/b/;p",
        "s/a/b/\np",
        "/x/{s/a/b/}",
        "y/abc/xyz/",
        "y/a/b/;p",
    ],
)
def test_sed_substitutions_pass_without_asking(script: str) -> None:
    assert sed_checks(script) == []


@pytest.mark.parametrize(
    "script",
    [
        "p",
        "1p",
        "$p",
        "1~2p",
        "0~3d",
        "1~10p",
        "1,5p",
        "1,10p",
        "10,20d",
        "12,3p",
        "1,+2d",
        "1,+12p",
        "1,~4d",
        "/x/p",
        "/x/Ip",
        "/x/Mp",
        "/x/IMp",
        "\\%x%p",
        "1,\\%x%p",
        "1,/end/d",
        "/a/,/b/d",
        "/a/,+3p",
        "/a/I,/b/Mp",
        "1,3!d",
        "$!N",
        "$ d",
        "1 p",
        "\tp",
    ],
)
def test_sed_addresses_pass_without_asking(script: str) -> None:
    assert sed_checks(script) == []


def test_sed_range_with_no_first_address_is_read_as_a_range() -> None:
    # sed itself rejects ",5p"; read as a range it prints, so passing it runs nothing risky.
    assert sed_checks(",5p") == []


@pytest.mark.parametrize(
    "script",
    [
        "p;p",
        "p;",
        "1d;2d",
        "p; d",
        "1d\n2d",
        "{p}",
        "/x/{p;d}",
        "$!{N}",
        "1!G;h;$!d",
        "=",
        "l",
        "z",
        "F",
        "2q",
        "2q5",
        "q 5",
        "Q",
        "q\np",
        "Q;p",
        "2q ;p",
        ":a;N;ba",
        ":a\nN\n$!ba",
        ":a;s/x/y/;ta",
        ":X;N;bX",
        "b end",
        "t",
        "T x",
        "bx;p",
        "tx\np",
        "# comment\np",
        "p # c",
        "p\n# c",
        "# x;e ls\np",
        "a hello",
        "c text",
        "1a foo\np",
        "a x\np",
        "p\na text",
    ],
)
def test_sed_commands_labels_comments_and_text_pass_without_asking(script: str) -> None:
    assert sed_checks(script) == []


@pytest.mark.parametrize(
    "script",
    [
        "s",
        "y",
        "1s",
        "s\\",
        "s/a",
        "s/a/b",
        "s/a\\",
        "y/a/b",
        "s\\a\\b\\",
        "y\\a\\b\\",
        "s\na\nb\n",
        "s/a\nb/c/",
        "y/a\nb/c/",
    ],
)
def test_sed_substitution_missing_a_part_or_with_a_bad_delimiter_asks(script: str) -> None:
    assert sed_checks(script) == ["inline-code"]


@pytest.mark.parametrize(
    "script",
    [
        "1",
        "$",
        "!",
        "1!",
        "1,",
        "1,2",
        "1,$",
        "1,+",
        "1,~",
        "1,+2",
        "1,/x/",
        "1,/x",
        "1,\\%x",
        "1,\\%x%",
        "/x/",
        "/x/I",
        "/a",
        "/ab",
        "/a\\",
        "\\",
        "\\%x%",
        "\\%x",
        "/a\nb/p",
        "XaXp",
        "/x/Xp",
        "1,Xp",
    ],
)
def test_sed_address_without_a_command_or_not_understood_asks(script: str) -> None:
    assert sed_checks(script) == ["inline-code"]


@pytest.mark.parametrize(
    "script",
    [
        "e ls",
        "1e rm -rf x",
        "$e",
        "1!e",
        "/x/!e ls",
        "1,2e",
        "1,+2e",
        "1,~2e",
        "1~2e",
        "1,+ep",
        "1,~ep",
        "w out",
        "W x",
        "r /etc/passwd",
        "R x",
        "v",
        "s/a/b/e",
        "s/a/b/ e",
        "s/a/b/g e",
        "s/a/b/w out",
        "s/a/b/;e",
        "s/a/b/;e ls",
        "s/a/b/M;e",
        "s/a/b/}e",
        "y/a/b/e",
        "p;ep",
        "z;e",
        "1;e",
        "}e ls",
        "{e ls",
        "q;e",
        "qe",
        "q5e",
        "2q;e ls",
        ":a;e ls",
        "b;e ls",
        "tx;e ls",
        "# c\ne ls\np",
        "#x\ne ls",
        "a foo\ne ls",
        "a x\ne ls\np",
        "i x\ne ls\np",
        "Xp",
    ],
)
def test_sed_scripts_that_run_write_or_read_files_ask(script: str) -> None:
    assert sed_checks(script) == ["inline-code"]
