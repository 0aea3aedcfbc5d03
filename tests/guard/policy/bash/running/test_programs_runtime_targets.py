"""``read``, ``mapfile`` and ``getopts`` into a variable whose name is only known at runtime.

``read "$v"`` can set ``PATH`` (or ``BASH_ENV``…) as surely as ``printf -v "$v"``, so it asks
the same; the values of options (a prompt, a timeout, a delimiter, a file descriptor) are not
variable names, however they are spelled. ``mapfile -C CALLBACK`` runs CALLBACK as a command.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        'read "$v"',
        'read -r "$v"',
        'read -a "$v"',
        'read -- "$v"',
        'read -t 5 -r x "$v"',
        'read -rp "$msg" "$v"',
        'mapfile "$v"',
        'readarray -t "$v"',
        'getopts ab "$v"',
        "read x PATH",
    ],
)
def test_a_variable_only_known_at_runtime_or_a_sensitive_one_asks(command: str) -> None:
    assert checks(command) == ["shell-environment"]


@pytest.mark.parametrize(
    "command",
    [
        'read -p "$msg" x',
        'read -rp "$msg" x',
        'read -p"$msg" x',
        'read -d "$delim" -r x',
        'read -t "$timeout" line',
        'read -u "$fd" -n "$count" x',
        "read -p PATH x",
        "read '-p' PATH x",  # a quoted option is still an option
        'read "-rp" PATH line',
        "IFS= read -r line",
        'mapfile -u "$fd" -t lines',
        'readarray -d "$sep" -n "$max" lines',
        "getopts ab opt",
    ],
)
def test_option_values_are_not_variable_names(command: str) -> None:
    assert checks(command) == []


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("mapfile -C 'rm -rf ~' -c 1 x < notes.txt", "block"),
        ("readarray -C'rm -rf ~' x < notes.txt", "block"),
        ("mapfile -tC 'git reset --hard' x < notes.txt", "confirm"),
        ("mapfile -t -C 'git reset --hard' -c 1 x < notes.txt", "confirm"),
        ('mapfile -C "$callback" x < notes.txt', "confirm"),
        ("mapfile -C 'echo' -c 1 x < notes.txt", "allow"),
        ("mapfile -t -u 3 x", "allow"),
    ],
)
def test_a_mapfile_callback_is_a_command_bash_runs(
    bash: Callable[[str], Verdict], command: str, verdict: str
) -> None:
    # bash runs the callback as `CALLBACK INDEX LINE` every -c lines
    assert bash(command).verdict == verdict


def test_the_callback_is_analysed_as_a_command() -> None:
    script = analyze("mapfile -C 'rm -rf build' -c 1 x < notes.txt", cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands if c.argv] == [
        ["mapfile", "-C", "rm -rf build", "-c", "1", "x"],
        ["rm", "-rf", "build"],
    ]
