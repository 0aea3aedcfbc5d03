"""``python -c`` code the bash analysis lets pass: imports and ``print`` of plain values.

Each case goes through :func:`analyze`; an ``inline-code`` finding means the guard asks.
Plain values are constants, names, attribute and index access, slices, operators,
comparisons, containers and f-strings; a dunder name or attribute (other than the few
harmless ones such as ``__version__``) anywhere inside makes it ask.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.walker import analyze


def python_checks(code: str) -> list[str]:
    command = "python3 -c " + shlex.quote(code)
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "code",
    [
        'print("hi")',
        "print(x)",
        "import sys; print(sys.version)",
        "import sys; print(sys.version_info.major)",
        "import numpy; print(numpy.__version__)",
        "import os; print(os.__file__)",
        "import os; print(os.__name__, os.path.__doc__)",
        "import sys; print(sys.argv[1])",
        "import sys; print(sys.argv[1:])",
        "import sys; print(sys.argv[:2])",
        "import sys; print(sys.argv[::2])",
        "import sys; print(sys.argv[0:3:1])",
        "print(1 + 1)",
        "print(2 * x - 1)",
        "print(-1)",
        "print(not x)",
        "print(a or b)",
        "print(a and b and c)",
        "print(1 < 2)",
        "print(1 < x <= 3)",
        "print((1, 2))",
        "print([1, x])",
        "print({1, 2})",
        'print(f"v{x}")',
        'import sys; print(f"{sys.version}")',
        'print(f"{x:>10}")',
        'print(f"{x:{width}}")',
        "print(1, 2, sep=x)",
        "x",
        "sys.version",
    ],
)
def test_plain_values_printed_pass_without_asking(code: str) -> None:
    assert python_checks(code) == []


@pytest.mark.parametrize(
    "code",
    [
        "print(__builtins__)",
        "print(__import__)",
        "print(().__class__)",
        "print(x.__class__.__mro__)",
        "print(x.__dict__)",
        "print(__builtins__.open)",
        "print(__builtins__[0])",
        "print(x[__builtins__])",
        "print(x[__builtins__:])",
        "print(x[:__builtins__])",
        "print(x[::__builtins__])",
        "print(1 + __builtins__)",
        "print(__builtins__ + 1)",
        "print(-__builtins__)",
        "print(x or __builtins__)",
        "print(__builtins__ or x)",
        "print(1 < __builtins__)",
        "print(__builtins__ < 1)",
        "print(1 < 2 < __builtins__)",
        "print((1, __builtins__))",
        "print([__builtins__])",
        "print({__builtins__})",
        'print(f"{__builtins__}")',
        'print(f"a{x}{__builtins__}")',
        'print(f"{x:{__builtins__}}")',
        "print(x, sep=__builtins__)",
        "print(len(x))",
        "print(*x)",
        "__builtins__",
    ],
)
def test_dunders_and_calls_inside_printed_values_ask(code: str) -> None:
    assert python_checks(code) == ["inline-code"]


PYTHON_LENGTH_LIMIT = 2000


@pytest.mark.parametrize(
    "code",
    [
        "import os.path",
        "import a.b.c",
        "import numpy, sys",
        "import sys as s; print(s.version)",
        "from os import path; print(path.sep)",
        "from os import path, sep",
        "from a.b import c as d",
    ],
)
def test_plain_imports_pass_without_asking(code: str) -> None:
    assert python_checks(code) == []


@pytest.mark.parametrize(
    "code",
    [
        "import this",
        "import antigravity",
        "import sys, this",
        "import idlelib.idle",
        "from idlelib import pyshell",
        "from idlelib.pyshell import main",
        "from this import x",
        "import __main__",
        "import unittest.__main__",
        "import a.__main__.b",
        "from __main__ import x",
        "from unittest.__main__ import main",
        "from a.__main__.b import c",
        "from pkg import __main__",
        "from os import *",
        "import os as print",
        "import print.foo; print(1)",
        "from a import print",
        "from os import system as print",
        "from . import x",
        "from .. import x",
        "from .mod import x",
    ],
)
def test_imports_that_run_code_or_rebind_print_ask(code: str) -> None:
    assert python_checks(code) == ["inline-code"]


@pytest.mark.parametrize(
    "code",
    ["", "pass", "x = 1", "print(", "len(x)", "print(**x)", "print(x, **y)"],
)
def test_empty_invalid_or_other_statements_ask(code: str) -> None:
    assert python_checks(code) == ["inline-code"]


def test_importing_the_guard_package_is_flagged_and_asks() -> None:
    assert python_checks("import guard.x") == ["guard-self", "inline-code"]
    assert python_checks("from guard.x import y") == ["guard-self", "inline-code"]


def test_code_of_exactly_the_length_limit_passes() -> None:
    code = "print(1)".ljust(PYTHON_LENGTH_LIMIT)
    assert len(code) == PYTHON_LENGTH_LIMIT
    assert python_checks(code) == []


def test_code_one_over_the_length_limit_asks() -> None:
    assert python_checks("print(1)".ljust(PYTHON_LENGTH_LIMIT + 1)) == ["inline-code"]
