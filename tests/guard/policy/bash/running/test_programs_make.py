"""make in the bash analysis: makefiles from streams, ``--eval`` and variables that change what runs.

``-f -`` (or a stream) hides the makefile, ``--eval``/``-E`` is inline make code, and setting
``SHELL``, ``.SHELLFLAGS``, ``MAKEFLAGS``, ``MAKEFILES`` or an ``LD_*`` variable on the command
line changes what make runs; each asks. Plain targets and ordinary variables do not.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "make",
        "make -j4 all",
        "gmake test",
        "make -f Makefile.other",
        "make --file=build.mk all",
        "make CC=clang CFLAGS=-O2",
        "make SHELL",  # a target that happens to be named SHELL sets nothing
        "make LD_docs",
        "make -DSHELL=x",
    ],
)
def test_ordinary_make_invocations_have_no_finding(command: str) -> None:
    assert findings(command) == []


STREAM = ("shell-stdin", "make reads a makefile from stdin or a stream")


@pytest.mark.parametrize(
    "command",
    [
        "make -f -",
        "make -f /dev/stdin",
        "make -f /proc/self/fd/0",
        "make --makefile=/proc/self/fd/3",
        'make -f "$mk"',
        "gmake -f -",
    ],
)
def test_makefile_read_from_a_stream_asks(command: str) -> None:
    assert findings(command) == [STREAM]


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("make --eval='all: ; rm x'", "--eval='all: ; rm x'"),
        ("make -E 'x: ; true'", "-E"),
    ],
)
def test_make_eval_is_inline_code_reported_verbatim(command: str, raw: str) -> None:
    assert findings(command) == [("inline-code", "make --eval runs inline make code: " + raw)]


@pytest.mark.parametrize(
    ("command", "value"),
    [
        ("make SHELL=/bin/x", "SHELL=/bin/x"),
        ("make 'SHELL=env A=1 bash'", "SHELL=env A=1 bash"),
        ("make .SHELLFLAGS=-ec", ".SHELLFLAGS=-ec"),
        ("make MAKEFLAGS=-j1", "MAKEFLAGS=-j1"),
        ("make MAKEFILES=evil.mk", "MAKEFILES=evil.mk"),
        ("make LD_PRELOAD=x.so", "LD_PRELOAD=x.so"),
        ("make all LD_LIBRARY_PATH=/tmp", "LD_LIBRARY_PATH=/tmp"),
    ],
)
def test_make_variables_that_change_what_runs_ask(command: str, value: str) -> None:
    assert findings(command) == [
        ("shell-environment", "make variable that changes what runs: " + value)
    ]
