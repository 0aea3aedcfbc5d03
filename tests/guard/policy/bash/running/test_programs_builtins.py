"""Shell builtins that change how later words are read, and the variables builtins assign.

``alias NAME=…``, ``shopt`` that sets, ``enable`` and ``hash -p`` ask. Declarations reached
as a command (``builtin export …``), ``read``/``mapfile``/``getopts`` targets and
``printf -v`` targets are checked like assignments: a sensitive name asks, and so does a
name only known at runtime where the builtin's arguments are names.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze

ASSIGNS_PATH = (
    "shell-environment",
    "assigns PATH, which changes what later commands run or where their paths point",
)


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "alias",
        "alias ll",  # prints an alias
        "shopt",
        "shopt -p",
        "shopt -q extglob",
        "shopt -p -s",
        "enable",
        "hash",
        "hash ls",
        "hash -r",
        "set -e",
        "set +e",
        "set +f",
        "set +o noglob",
        "set -- PATH HOME",  # positional parameters, not variables
        'set -- "$x"',
        'set "$x"',
        "read x",
        "read -r line",
        "read -p 'Name? ' name",
        'read -p "$prompt" answer',  # a prompt only known at runtime is not a name
        "mapfile -t lines",
        "getopts ab opt",
        "getopts ab opt -a PATH",  # words after the name are arguments to parse
        "getopts ab opt PATH",
        "getopts",
        "printf -v x %s 1",
        "printf -v",
        "printf '%s\\n' PATH",
        "printf '%s\\n' a=b",
        "printf -v 1x %s 1",  # not a valid name: bash refuses it
        "builtin export A=1",
        "builtin export A=b=c",
        "builtin readonly x=1",
        "command local a b",
    ],
)
def test_harmless_builtins_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "detail"),
    [
        ("alias ll='ls -l'", "alias changes what a command word runs"),
        ('alias "$a"', "alias changes what a command word runs"),
        ("shopt -s extglob", "shopt changes how words are read or expanded"),
        ("shopt -u expand_aliases", "shopt changes how words are read or expanded"),
        ("enable -n echo", "enable loads or disables shell builtins"),
        ("enable -f ./x.so x", "enable loads or disables shell builtins"),
        ("hash -p /tmp/x ls", "hash -p makes a command name run another file"),
        ("hash -p/tmp/x ls", "hash -p makes a command name run another file"),
        ('hash "$x"', "hash -p makes a command name run another file"),
    ],
)
def test_builtins_that_change_how_words_are_read_ask(command: str, detail: str) -> None:
    assert findings(command) == [("shell-environment", detail)]


@pytest.mark.parametrize(
    "command",
    [
        "builtin export PATH=/x",
        "command export PATH=/x",
        "read PATH",
        "read -r x PATH",
        "mapfile PATH",
        "getopts ab PATH",
        "printf -v PATH %s /x",
        "printf -v PATH +foo",  # a value that looks like 'set +f' changes nothing
        "printf -v PATH",  # not relying on bash rejecting an incomplete printf
        "printf '%s\\n' -v PATH",
    ],
)
def test_sensitive_names_assigned_by_builtins_ask(command: str) -> None:
    assert findings(command) == [ASSIGNS_PATH]


@pytest.mark.parametrize(
    ("command", "detail"),
    [
        ("builtin export 1B=2", "assigns 1B, which changes"),
        ("builtin declare a-b", "assigns a-b, which changes"),
    ],
)
def test_declarations_of_invalid_names_ask(command: str, detail: str) -> None:
    assert findings(command) == [
        ("shell-environment", detail + " what later commands run or where their paths point")
    ]


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ('builtin export "$v"', "export"),
        ("command local $x", "local"),
        ('builtin declare "$v"', "declare"),
        ('printf -v "$n" %s 1', "printf"),
    ],
)
def test_names_only_known_at_runtime_ask(command: str, program: str) -> None:
    assert findings(command) == [
        ("shell-environment", f"{program} of a name only known at runtime")
    ]


def test_a_runtime_name_does_not_hide_the_names_after_it() -> None:
    assert findings('builtin export "$v" PATH=/x') == [
        ("shell-environment", "export of a name only known at runtime"),
        ASSIGNS_PATH,
    ]
