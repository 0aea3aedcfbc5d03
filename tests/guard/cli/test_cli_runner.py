"""``tests.cli_runner.invoke``: what a child process would have had, and nothing left behind."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import structlog

import guard._cli
from guard._logging import get_logger
from tests.cli_runner import invoke
from tests.guard.cli.test_cli import one_line_error


def handled_by(monkeypatch: pytest.MonkeyPatch, handler: Callable[[Any], int]) -> None:
    """Every command line runs ``handler`` (inside ``main``'s error handling)."""
    parser = argparse.ArgumentParser()
    parser.set_defaults(func=handler)
    monkeypatch.setattr(guard._cli, "build_parser", lambda: parser)


def test_streams_environment_and_working_directory_are_the_childs_and_restored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    def handler(_: Any) -> int:
        seen.update(stdin=sys.stdin.buffer.read(), env=dict(os.environ), cwd=os.getcwd())
        sys.stdout.write("out ✓\n")
        sys.stderr.write("err\n")
        return 5

    handled_by(monkeypatch, handler)
    env, cwd, streams = dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)
    done = invoke(env={"ONLY": "this"}, stdin=b"\xffin", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (5, "out ✓\n", "err\n")
    assert done.stdout_bytes == "out ✓\n".encode()
    assert seen == {"stdin": b"\xffin", "env": {"ONLY": "this"}, "cwd": str(tmp_path)}
    assert (dict(os.environ), os.getcwd()) == (env, cwd)
    assert (sys.stdin, sys.stdout, sys.stderr) == streams


@pytest.mark.parametrize(
    ("code", "returncode", "stderr"), [(None, 0, ""), (3, 3, ""), ("no", 1, "no\n")]
)
def test_system_exit_becomes_the_exit_code(
    monkeypatch: pytest.MonkeyPatch, code: int | str | None, returncode: int, stderr: str
) -> None:
    def handler(_: Any) -> int:
        sys.exit(code)

    handled_by(monkeypatch, handler)
    done = invoke()
    assert (done.returncode, done.stderr) == (returncode, stderr)


def test_an_exception_that_escapes_main_fails_the_test_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def handler(_: Any) -> int:
        raise RuntimeError("disk on fire")

    handled_by(monkeypatch, handler)
    streams = (sys.stdin, sys.stdout, sys.stderr)
    with pytest.raises(RuntimeError, match="disk on fire"):  # DEBUG: main re-raises
        invoke(env={**os.environ, "PI_OPERATOR_GUARD_DEBUG": "1"})
    assert (sys.stdin, sys.stdout, sys.stderr) == streams


def test_a_traceback_printed_to_stderr_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(_: Any) -> int:
        try:
            raise ValueError("stray")
        except ValueError:
            traceback.print_exc()
        return 1

    handled_by(monkeypatch, handler)
    done = invoke()
    assert "Traceback (most recent call last)" in done.stderr
    with pytest.raises(AssertionError):
        one_line_error(done)


def test_log_lines_land_in_stderr_and_logging_is_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(_: Any) -> int:
        get_logger("guard.runner-test").warning("runner.seen", n=1)
        return 0

    handled_by(monkeypatch, handler)
    before = structlog.get_config()
    done = invoke(env={k: v for k, v in os.environ.items() if not k.endswith("LOG_LEVEL")})
    (line,) = done.stderr.splitlines()
    logged = json.loads(line)
    assert (logged["event"], logged["logger"], logged["n"]) == (
        "runner.seen",
        "guard.runner-test",
        1,
    )
    assert structlog.get_config() == before
