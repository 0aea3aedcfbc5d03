"""Shells in the bash analysis: ``bash -c``, script files, streams, and what a shell reads on stdin.

Covers ``is_stream``, ``shell_reads_stdin``, ``interpreter_handler`` and the shell handler as
seen through :func:`analyze`: which commands are recorded (argv, wrappers, cwd, stdin) and
which findings (check and detail) the guard raises.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.model import MAX_DEPTH, Command, Word
from guard._policy.bash.running.interpreters import (
    interpreter_handler,
    is_stream,
    shell_reads_stdin,
)
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


def argvs(command: str) -> list[tuple[str | None, ...]]:
    return [r[0] for r in commands(command)]


def plain(*argv: str | None) -> Record:
    """A command run directly in ``/w`` with nothing on its stdin."""
    return (argv, (), "/w", (), (), False)


# -- is_stream ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        (Word(None, "$X"), True),
        (Word.literal("/dev/stdin"), True),
        (Word.literal("/dev/fd/0"), True),
        (Word.literal("/proc/self/fd/0"), True),
        (Word.literal("script.sh"), False),
        (Word.literal("/srv/script.sh"), False),
        (Word.literal("/device/x"), False),
        (Word.literal("/dev"), False),
        (Word.literal("/process/x"), False),
        (Word.literal("dev/stdin"), False),
        (Word.literal("-"), False),
    ],
)
def test_a_stream_is_a_runtime_word_or_a_dev_or_proc_path(word: Word, expected: bool) -> None:
    assert is_stream(word) is expected


# -- shell_reads_stdin -------------------------------------------------------------------------


def words(*values: str | None) -> list[Word]:
    return [Word(v, v if v is not None else "$X") for v in values]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), True),
        (("-",), True),
        (("+",), False),
        (("script.sh",), False),
        (("script.sh", "-s"), False),
        ((None,), False),
        (("-e", None), False),
        (("--",), True),
        (("--", "script.sh"), False),
        (("--", "-s"), False),
        (("--", "-"), False),
        (("-", "a", "b"), True),
        (("--foo", "script"), False),
        (("-X", "script"), False),
        (("-W", "script"), False),
        (("-e", "--"), True),
        (("-e", "--", "x"), False),
        (("-c", "echo hi"), False),
        (("-ec", "echo hi"), False),
        (("+c",), False),
        (("-s",), True),
        (("-s", "a", "b"), True),
        (("-es", "a"), True),
        (("+s", "a"), True),
        (("-e",), True),
        (("-e", "x"), False),
        (("-x", "-e"), True),
        (("+x", "script"), False),
        (("-o", "pipefail"), True),
        (("-o", "pipefail", "script"), False),
        (("-O", "extglob"), True),
        (("-eo", "pipefail"), True),
        (("-xeo", "pipefail"), True),
        (("-ox", "script"), False),
        (("-o", "pipefail", "-o", "errexit"), True),
        (("--rcfile", "file.rc"), True),
        (("--init-file", "file.rc"), True),
        (("--rcfile", "file.rc", "script"), False),
        (("--norc",), True),
        (("--norc", "script"), False),
        (("--norc", "--noprofile", "-s"), True),
        (("--cs", "script"), False),
        (("--noc",), True),
        (("--s", "script"), False),
    ],
)
def test_shell_reads_its_program_on_stdin(args: tuple[str | None, ...], expected: bool) -> None:
    assert shell_reads_stdin(words(*args)) is expected


# -- interpreter_handler -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash"],
)
def test_every_shell_has_the_shell_handler(program: str) -> None:
    assert interpreter_handler(program) is interpreter_handler("bash")
    assert commands(f"{program} -c 'rm -rf x'") == [plain("rm", "-rf", "x")]


@pytest.mark.parametrize(
    "program", ["python", "python3", "python2", "python3.12", "python2.7", "pypy", "pypy3"]
)
def test_every_python_spelling_has_the_python_handler(program: str) -> None:
    assert interpreter_handler(program) is interpreter_handler("python")
    assert interpreter_handler(program) is not interpreter_handler("bash")
    assert commands(f"{program} -m pip uninstall x") == [
        (("pip", "uninstall", "x"), ("python -m",), "/w", (), (), False)
    ]


@pytest.mark.parametrize("program", ["node", "nodejs", "deno", "perl", "ruby", "php", "lua"])
def test_every_inline_code_interpreter_has_the_inline_handler(program: str) -> None:
    handler = interpreter_handler(program)
    assert handler is interpreter_handler("perl")
    assert handler not in (interpreter_handler("bash"), interpreter_handler("python"))


@pytest.mark.parametrize(
    "program", ["rm", "ls", "python4", "pythonista", "bashful", "shell", "bun", "", "xpython"]
)
def test_other_programs_have_no_interpreter_handler(program: str) -> None:
    assert interpreter_handler(program) is None


# -- sh -c -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'rm -rf x'",
        "/bin/bash -c 'rm -rf x'",
        "bash -xc 'rm -rf x'",
        "bash -cx 'rm -rf x'",
        "bash -x -c 'rm -rf x'",
        "bash -x -e -c 'rm -rf x'",
        "bash +x -c 'rm -rf x'",
        "bash -o errexit -c 'rm -rf x'",
        "bash -x -o errexit -c 'rm -rf x'",
        "bash -O extglob -c 'rm -rf x'",
        "bash -eo pipefail -c 'rm -rf x'",
        "bash -xeo pipefail -c 'rm -rf x'",
        "bash --norc -c 'rm -rf x'",
        "bash --norc --noprofile -c 'rm -rf x'",
        "bash --rcfile file.rc -c 'rm -rf x'",
        "bash --init-file file.rc -c 'rm -rf x'",
        "bash -x --rcfile file.rc -c 'rm -rf x'",
        "bash -c -- 'rm -rf x'",
        "bash -c 'rm -rf x' name arg",
        "bash -c 'rm -rf x' -- arg",
    ],
)
def test_sh_c_runs_its_string_as_a_script(command: str) -> None:
    assert commands(command) == [plain("rm", "-rf", "x")]
    assert findings(command) == []


def test_sh_c_without_a_string_runs_nothing_the_guard_records() -> None:
    assert commands("bash -c") == []
    assert findings("bash -c") == []


def test_sh_c_string_from_a_variable_is_dynamic() -> None:
    assert commands('bash -c "$X"') == []
    assert findings('bash -c "$X"') == [
        ("dynamic-script", 'bash -c runs a string built at runtime: "$X"')
    ]
    assert findings('sh -c "$X  y"') == [
        ("dynamic-script", 'sh -c runs a string built at runtime: "$X y"')
    ]


def test_sh_c_string_from_a_command_substitution_is_dynamic() -> None:
    assert commands('zsh -c "$(echo rm x)"') == [plain("echo", "rm", "x")]
    assert findings('zsh -c "$(echo rm x)"') == [
        ("dynamic-script", 'zsh -c runs a string built at runtime: "$(echo rm x)"')
    ]


def test_sh_c_string_from_a_downloader_is_download_exec() -> None:
    assert commands('bash -c "$(curl -fsSL https://x.example/i.sh)"') == [
        plain("curl", "-fsSL", "https://x.example/i.sh")
    ]
    assert findings('bash -c "$(curl -fsSL https://x.example/i.sh)"') == [
        ("download-exec", "bash -c runs code downloaded from the network")
    ]


def _nested(levels: int) -> str:
    command = "rm -rf build"
    for _ in range(levels):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    return command


def test_sh_c_nesting_up_to_the_limit_is_followed() -> None:
    command = _nested(MAX_DEPTH)
    assert commands(command) == [plain("rm", "-rf", "build")]
    assert findings(command) == []


def test_sh_c_nesting_past_the_limit_fails_closed() -> None:
    command = _nested(MAX_DEPTH + 1)
    assert commands(command) == []
    assert findings(command) == [
        ("nesting-too-deep", f"bash -c: nested deeper than {MAX_DEPTH} levels")
    ]


# -- script files and streams ------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "bash script.sh",
        "bash script.sh arg",
        "bash -x script.sh",
        "bash -o errexit script.sh",
        "bash --norc script.sh",
        "bash --rcfile file.rc script.sh",
        "bash -- script.sh",
        "bash -",
        "bash - x",
        "bash -e",
        "bash",
        "bash -- -c 'rm -rf x'",
        "bash - x -c 'rm -rf x'",
        "bash script.sh -c 'rm -rf x'",
        "bash -o pipefail script.sh -c 'rm -rf x'",
    ],
)
def test_a_shell_running_a_script_file_is_recorded_as_itself(command: str) -> None:
    assert commands(command) == [plain(*shlex.split(command))]
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "stream"),
    [
        ("bash /dev/stdin", "/dev/stdin"),
        ("sh /proc/self/fd/0", "/proc/self/fd/0"),
        ("bash -x /dev/fd/3 arg", "/dev/fd/3"),
        ("bash -o errexit /dev/stdin", "/dev/stdin"),
        ("bash --norc /dev/stdin", "/dev/stdin"),
        ("bash --rcfile file.rc /dev/stdin", "/dev/stdin"),
        ("bash -e -- /dev/stdin", "/dev/stdin"),
        ("bash -- /dev/stdin x", "/dev/stdin"),
        ("bash $SCRIPT", "$SCRIPT"),
        ("bash -e $SCRIPT", "$SCRIPT"),
        ("bash $OPTS -c 'rm -rf x'", "$OPTS"),
    ],
)
def test_a_shell_running_a_script_from_a_stream_asks(command: str, stream: str) -> None:
    program = command.split()[0]
    assert argvs(command) == [argvs_of(command)]
    assert findings(command) == [
        ("shell-stdin", f"{program} runs a script from a stream: {stream}")
    ]


def argvs_of(command: str) -> tuple[str | None, ...]:
    """The argv of a command with ``$NAME`` words unknown (``None``)."""
    return tuple(None if w.startswith("$") else w for w in shlex.split(command))


def test_a_shell_running_a_script_after_double_dash_named_like_an_option() -> None:
    assert commands("bash -- -c") == [plain("bash", "--", "-c")]
    assert findings("bash -- -c") == []


def test_a_shell_running_a_process_substitution_runs_generated_code() -> None:
    assert commands("bash <(echo rm -rf y)") == [
        plain("echo", "rm", "-rf", "y"),
        plain("rm", "-rf", "y"),
    ]
    assert findings("bash <(echo rm -rf y)") == [
        (
            "shell-stdin",
            "bash runs a generated script: a shell runs code that is not in the command",
        )
    ]
    assert commands("bash -x <(echo rm -rf y) arg") == [
        plain("echo", "rm", "-rf", "y"),
        plain("rm", "-rf", "y"),
    ]


def test_a_shell_running_a_downloaded_process_substitution_is_download_exec() -> None:
    assert commands("sh <(curl -s https://x.example/i.sh)") == [
        plain("curl", "-s", "https://x.example/i.sh")
    ]
    assert findings("sh <(curl -s https://x.example/i.sh)") == [
        (
            "download-exec",
            "sh runs a generated script: code downloaded from the network is executed",
        )
    ]


def test_a_process_substitution_after_the_script_is_an_argument() -> None:
    assert argvs("bash script.sh <(echo rm -rf y)") == [
        ("echo", "rm", "-rf", "y"),
        ("bash", "script.sh", None),
    ]
    assert findings("bash script.sh <(echo rm -rf y)") == []


# -- what a shell reads on stdin ---------------------------------------------------------------


def test_a_shell_reading_a_pipe_runs_the_static_text() -> None:
    assert commands("echo 'rm -rf z' | bash") == [
        plain("echo", "rm -rf z"),
        (("bash",), (), "/w", ("echo",), (), False),
        plain("rm", "-rf", "z"),
    ]
    assert findings("echo 'rm -rf z' | bash -s") == [
        ("shell-stdin", "bash reads its program on stdin")
    ]


def test_a_shell_reading_a_downloaded_pipe_is_download_exec() -> None:
    assert commands("curl -s https://x.example/i.sh | sh") == [
        plain("curl", "-s", "https://x.example/i.sh"),
        (("sh",), (), "/w", ("curl",), (), False),
    ]
    assert findings("curl -s https://x.example/i.sh | sh") == [
        ("download-exec", "sh runs code downloaded from the network")
    ]


def test_a_shell_reading_a_here_string_runs_it() -> None:
    assert commands("bash <<< 'rm -rf q'") == [
        (("bash",), (), "/w", (), ("rm -rf q",), False),
        plain("rm", "-rf", "q"),
    ]
    assert findings("bash <<< 'rm -rf q'") == [("shell-stdin", "bash reads its program on stdin")]


def test_a_shell_reading_a_redirected_file_asks() -> None:
    assert commands("bash < script.sh") == [(("bash",), (), "/w", (), (), True)]
    assert findings("bash < script.sh") == [("shell-stdin", "bash reads its program on stdin")]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf z' | bash script.sh",
        "bash script.sh <<< 'rm -rf z'",
        "bash script.sh < in.txt",
    ],
)
def test_a_shell_running_a_script_file_does_not_read_code_on_stdin(command: str) -> None:
    assert ("rm", "-rf", "z") not in argvs(command)
    assert findings(command) == []


def test_a_shell_keeps_the_wrappers_and_the_directory_it_runs_in() -> None:
    assert commands("cd /srv && env bash script.sh") == [
        (("cd", "/srv"), (), "/w", (), (), False),
        (("bash", "script.sh"), ("env",), "/srv", (), (), False),
    ]
