"""``pi-guard`` run inside the test process, as a child process would have run it.

:func:`invoke` calls :func:`guard._cli.main` with the argv, and for the call only swaps in
the environment, working directory and standard streams a child would have had (text
streams over bytes, with ``.buffer``), and the parent process id a child would have seen;
it turns ``SystemExit`` into the exit code, restores structlog's configuration, and clears
the per-process caches a fresh process starts without. Output is decoded as
``subprocess.run(..., text=True)`` decodes it. An exception that escapes ``main`` is not
caught: the test fails with its traceback. Use a real subprocess where the process itself
is the subject (the console script, signals, file descriptors, process isolation).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import structlog

from guard._cli import main

__all__ = ["Result", "invoke"]


@dataclass(frozen=True)
class Result:
    """What a finished ``pi-guard`` left: exit code, and stdout and stderr as text and bytes."""

    args: tuple[str, ...]
    returncode: int
    stdout_bytes: bytes
    stderr_bytes: bytes

    @property
    def stdout(self) -> str:
        return _decoded(self.stdout_bytes)

    @property
    def stderr(self) -> str:
        return _decoded(self.stderr_bytes)


def invoke(
    *args: str,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
) -> Result:
    """Run ``pi-guard [--home HOME] ARGS...`` in this process.

    ``env``: the whole environment for the call (default: this process's, unchanged).
    ``stdin``: its standard input (default: empty). ``cwd``: its working directory.
    """
    argv = (*(("--home", str(home)) if home is not None else ()), *args)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    out, err = io.BytesIO(), io.BytesIO()
    with _process_state(env, cwd), _streams(data, out, err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = _exit_code(exc.code)
        sys.stdout.flush()
        sys.stderr.flush()
        return Result(argv, int(code), out.getvalue(), err.getvalue())


def _exit_code(code: object) -> int:
    """The status ``sys.exit(code)`` gives a process (a message goes to stderr, exit 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)
    sys.stderr.write(f"{code}\n")
    return 1


def _decoded(data: bytes) -> str:
    # As subprocess.run(text=True) reads a pipe: UTF-8 and universal newlines.
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


@contextlib.contextmanager
def _streams(data: bytes, out: io.BytesIO, err: io.BytesIO) -> Iterator[None]:
    # A child's pipes: UTF-8, strict on stdin/stdout, backslashreplace on stderr.
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
    sys.stderr = io.TextIOWrapper(
        err, encoding="utf-8", errors="backslashreplace", newline="\n", line_buffering=True
    )
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _process_state(env: Mapping[str, str] | None, cwd: Path | None) -> Iterator[None]:
    from guard._evidence import recall
    from guard._policy.settings import surroundings

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_runtime = dict(surroundings._RUNTIME)
    configured = structlog.is_configured()
    saved_log = structlog.get_config()
    parent = os.getpid()
    getppid = os.getppid
    recall._indexes.clear()
    surroundings._cached.cache_clear()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        os.getppid = lambda: parent  # a child's parent is this process
        yield
    finally:
        os.getppid = getppid
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        surroundings._RUNTIME.clear()
        surroundings._RUNTIME.update(saved_runtime)
        recall._indexes.clear()
        surroundings._cached.cache_clear()
        if configured:
            structlog.configure(**saved_log)
        else:
            structlog.reset_defaults()
