"""awk in the bash analysis: which words are the program, script files, ``-v`` assignments.

The program is the first operand unless ``-e``/``-f`` give it; operands after it are input
files. A program read from a stream asks, and so does ``-v`` assigning anything but a plain
lower-case variable or a field/record separator.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "awk '{print}' f",
        "gawk '{print}' f",
        "awk '{print $1}' 'BEGIN{system(\"rm x\")}'",  # a file operand, not a second program
        "awk -F : '{print $1}' /etc/passwd",
        "awk -F, '{print $1}' data.csv",
        "awk --field-separator : '{print $1}' /etc/passwd",
        "awk -v x=1 '{print x}' f",
        "awk -vx=1 '{print x}' f",
        "awk -v _count=2 '{print}' f",
        "awk -v x=a=b '{print x}' f",  # the name is what stands before the first '='
        "awk -v FS=: '{print}' f",
        "awk -v OFS=, '{print}' f",
        "awk -v IFS=, '{print}' f",
        "awk -v RS=';' '{print}' f",
        "awk --assign x=1 '{print}' f",
    ],
)
def test_plain_awk_programs_and_assignments_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("awk -v NR=1 '{print}' f", "NR=1"),
        ("awk -v ENVIRON=1 '{print}' f", "ENVIRON=1"),
        ("awk -v A=1 '{print}' f", "A=1"),
        ("awk -v 'A=1' '{print}' f", "'A=1'"),
        ("awk --assign=NR=1 '{print}' f", "--assign=NR=1"),
        ("awk -v1x=2 '{print}' f", "-v1x=2"),
        ('awk -v "$x" 1', '"$x"'),
        ("awk -v '' '{print}' f", "''"),
    ],
)
def test_awk_v_assigning_a_special_variable_is_reported_verbatim(command: str, raw: str) -> None:
    assert findings(command) == [("inline-code", "awk -v assigns a special variable: " + raw)]


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("awk -f - x", "-"),
        ("awk -f /dev/stdin x", "/dev/stdin"),
        ("awk -f /proc/self/fd/0 x", "/proc/self/fd/0"),
        ('awk -f "$prog" x', '"$prog"'),
    ],
)
def test_awk_program_read_from_a_stream_asks(command: str, raw: str) -> None:
    assert findings(command) == [("shell-stdin", "awk reads its program from a stream: " + raw)]


def test_awk_program_file_on_disk_has_no_finding() -> None:
    assert findings("awk -f prog.awk x") == []


def test_awk_program_that_runs_commands_is_inline_awk_code() -> None:
    assert findings("awk -F : 'BEGIN{system(\"rm x\")}'") == [
        ("inline-code", 'inline awk code: BEGIN{system("rm x")}')
    ]
