"""How ``mapfile -C CALLBACK`` is found, however the option is spelled.

bash runs CALLBACK as a command (``CALLBACK INDEX LINE``) every ``-c`` lines (5000 by default),
so every spelling of the option must put CALLBACK through the analysis: quoted option
letters, the callback glued to ``-C`` or in the next word, other options (with their values)
before it, no array name after it. A callback only known at runtime asks; an argument that is
not the callback (the array name, another option's value) is not analysed as a command.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def commands(command: str) -> list[list[str | None]]:
    """argv of every command the analysis found after the first (mapfile itself)."""
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv][1:]


@pytest.mark.parametrize(
    "command",
    [
        "mapfile \"-C\" 'rm -rf ~' x < notes.txt",
        "mapfile '-C' 'rm -rf ~' x < notes.txt",
        "mapfile -\\C 'rm -rf ~' x < notes.txt",
        "mapfile $'-C' 'rm -rf ~' x < notes.txt",
        "mapfile -\"C\" 'rm -rf ~' x < notes.txt",
        "mapfile \"-tC\" 'rm -rf ~' x < notes.txt",
        "mapfile \"-C\"'rm -rf ~' x < notes.txt",
        "mapfile -u 3 -C 'rm -rf ~' x 3< notes.txt",  # an option's value before -C
        "mapfile -c 1 -C 'rm -rf ~' x < notes.txt",
        "mapfile -C 'rm -rf ~' < notes.txt",  # no array name: bash fills MAPFILE
        "readarray -C 'rm -rf ~'",
        "mapfile -d '' -C 'rm -rf ~' x < notes.txt",
        "builtin mapfile -C 'rm -rf ~' x < notes.txt",
        "command mapfile -C 'rm -rf ~' x < notes.txt",
        "\\mapfile -C 'rm -rf ~' x < notes.txt",
        "mapfile -C echo -C 'rm -rf ~' x < notes.txt",  # bash takes the last -C
    ],
)
def test_every_spelling_of_the_callback_is_analysed(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert bash(command).verdict == "block"
    assert ["rm", "-rf", "~"] in commands(command)


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("mapfile -Cx x", [["x"]]),  # glued: the callback is the rest of the word
        ("mapfile -Cx 'rm -rf ~'", [["x"]]),  # the next word is the array name, not code
        ("mapfile xC 'rm -rf ~'", []),  # not an option: the array name
        ("mapfile -C", []),  # nothing after -C: bash refuses it, nothing runs
        ("mapfile -t -C", []),
        ("mapfile -- -t x", []),
    ],
)
def test_only_the_callback_is_analysed_as_a_command(
    command: str, found: list[list[str | None]]
) -> None:
    assert commands(command) == found
    assert [f.check for f in analyze(command, cwd="/w", home="/h").findings] == []


@pytest.mark.parametrize(
    "command",
    [
        'mapfile -C"$cb" x < notes.txt',
        'mapfile -tC"$cb" x < notes.txt',
        'mapfile -C "$cb"',
        "mapfile -C \"$(printf 'rm -rf ~')\" x < notes.txt",
    ],
)
def test_a_callback_only_known_at_runtime_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    findings = [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]
    assert ("dynamic-script", "mapfile -C runs a callback built at runtime") in findings
    assert bash(command).verdict == "confirm"


@pytest.mark.parametrize("program", ["mapfile", "readarray"])
def test_a_callback_nested_too_deep_is_refused_with_its_name(program: str) -> None:
    command = "rm -rf ~"
    for _ in range(9):
        command = f"{program} -C {shlex.quote(command)} x"
    findings = [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]
    assert ("nesting-too-deep", f"{program} -C: nested deeper than 8 levels") in findings
