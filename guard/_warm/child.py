"""A fork server's child becoming the sidecar its launcher would have started cold.

It closes everything of the server's, leaves the server's session, and waits for its release
(``G`` on a pipe; EOF: the launcher never took it, so it ends touching nothing). Then it takes
the launcher's stdin, stdout, stderr and working directory, its umask, priority, limits,
environment and the signals it inherited as ignored, notes pi (the launcher's parent) as the
process it serves (:func:`guard._policy.serve_for`), and runs ``pi-guard serve`` as the cold
path does. It never returns into the server's loop.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import NoReturn, TextIO

from guard._warm import facts
from guard._warm.wire import Request

__all__ = ["become_sidecar"]

_KEPT: list[object] = []
"""The server's stdio objects (``sys.__stdin__`` … still name them): kept, so collecting them
never closes fds 0-2."""


def become_sidecar(
    closers: list[Callable[[], None]], fds: list[int], go: int, request: Request, pi: int
) -> NoReturn:
    """Never returns: the process ends with the sidecar's exit code."""
    code = 70
    try:
        for close in closers:
            with contextlib.suppress(OSError):
                close()
        os.setsid()
        if os.read(go, 1) != b"G":
            os._exit(0)
        os.close(go)
        _take_over(fds, request)
        from guard._policy import serve_for

        serve_for(pi)
        code = _serve(request.argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # never back into the server's loop
        with contextlib.suppress(Exception):
            sys.stderr.write("pi-guard: warm start: the sidecar could not start\n")
    _end(code)


def _take_over(fds: list[int], request: Request) -> None:
    stdin, stdout, stderr, cwd = fds
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
    os.fchdir(cwd)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    os.umask(request.umask)
    now = os.getpriority(os.PRIO_PROCESS, 0)
    if request.nice > now:
        os.setpriority(os.PRIO_PROCESS, 0, request.nice)
    import resource

    for name, (soft, hard) in request.rlimits.items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    for sig in facts.SIGNALS:
        ignored = int(sig) in request.ignored
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, signal.SIG_IGN if ignored else default)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request.env)
    time.tzset()
    sys.argv = [sys.argv[0], *request.argv]
    _KEPT.extend([sys.stdin, sys.stdout, sys.stderr])
    sys.stdin = _stream(0, "r", sys.stdin)
    sys.stdout = _stream(1, "w", sys.stdout)
    sys.stderr = _stream(2, "w", sys.stderr)


def _stream(fd: int, mode: str, like: TextIO | None) -> io.TextIOWrapper:
    """A fresh text stream on ``fd`` as Python makes one at its start (the server's were
    made for ``/dev/null``)."""
    raw = io.FileIO(fd, mode, closefd=False)
    tty = raw.isatty()
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors="backslashreplace" if fd == 2 else getattr(like, "errors", None) or "strict",
        line_buffering=fd == 2 or (mode == "w" and tty),
    )


def _serve(argv: tuple[str, ...]) -> int:
    from guard._cli import main

    return main(list(argv))


def _end(code: int) -> NoReturn:
    """End as ``guard._cli.io.exit_process`` does after the sidecar (flush, exit handlers,
    no teardown of the heap)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    os._exit(code)
