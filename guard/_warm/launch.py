"""The launcher pi spawns (``python -I -m guard._warm serve``): a warm sidecar, or a cold one.

Standard library only besides :mod:`guard._home`, so it starts in a few tens of milliseconds.
It finds the home as the sidecar would, connects to the home's fork server and hands it its
stdin, stdout, stderr and working directory (:mod:`guard._warm.wire`). Once it has taken the
sidecar the server forked, it forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2
to it (by pidfd: never to a pid reused since) and ends as it ended: the same exit code, or
the same signal raised on itself, so what pi sees and says is what a cold sidecar gives.

Anything else (warm start off, no server, a refusal, a protocol error, a server that went
away before the launcher took a sidecar) and the launcher ``execv``s the cold sidecar,
``python -I -m guard serve``, in its own place: a session always gets a judged sidecar. With
no server it also starts one in the background for the next session.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
from pathlib import Path
from typing import NoReturn

from guard._home import WARM_SOCKET_FILE, resolve_home, warm_idle
from guard._warm import facts
from guard._warm.wire import (
    ACK,
    HEADER,
    MAGIC,
    SERVE_ARGV,
    ProtocolError,
    Request,
    decode_line,
)

__all__ = [
    "FORWARDED",
    "Refused",
    "cold",
    "handoff",
    "main",
    "start_server",
]

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
"""The signals a launcher passes on to its sidecar."""
_TIMEOUT = 5.0
_LATE_STATUS = 2.0


class Refused(Exception):
    """No warm sidecar for this launch; ``args[0]`` is the reason, ``args[1]`` whether a
    fork server should be started for the next launch."""


def cold(argv: tuple[str, ...]) -> NoReturn:
    """Become today's sidecar (``python -I -m guard <argv>``) in this process."""
    os.execv(sys.executable, [sys.executable, "-I", "-m", "guard", *argv])  # noqa: S606


def start_server(home: Path, idle: float) -> None:
    """Start ``home``'s fork server in the background (a session of its own, stdio on
    ``/dev/null``, ``/`` as its directory); one that finds another running ends at once.

    Its environment is only what a Python process reads at its start
    (:func:`~guard._warm.facts.startup_env`): not the rest of this session's (a provider's
    API key, a ledger's URL with its password), which the server would keep past the
    session's end and every sidecar it forks would show in ``/proc/<pid>/environ``. Each
    sidecar takes its own launcher's environment after the fork."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.closerange(3, 1 << 16)
                os.chdir("/")
                args = ["-I", "-m", "guard._warm", "--fork-server", str(home), repr(idle)]
                start = facts.startup_env(os.environ)
                os.execve(sys.executable, [sys.executable, *args], start)  # noqa: S606
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _request(argv: tuple[str, ...]) -> Request:
    umask = os.umask(0)
    os.umask(umask)
    return Request(
        argv=argv,
        env=dict(os.environ),
        umask=umask,
        nice=os.getpriority(os.PRIO_PROCESS, 0),
        ignored=tuple(facts.ignored_signals()),
        rlimits={k: (v[0], v[1]) for k, v in facts.rlimits().items()},
        python=sys.executable,
        version=sys.version,
        roots=tuple(facts.code_roots()),
    )


def _line(sock: socket.socket, buffer: bytearray) -> bytes | None:
    """The next line from ``sock`` (``None`` at EOF)."""
    while b"\n" not in buffer:
        chunk = sock.recv(4096)
        if not chunk:
            return None
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


def handoff(home: Path, argv: tuple[str, ...]) -> tuple[socket.socket, int, int, bytearray]:
    """Hand this launcher's stdio to ``home``'s fork server and take the sidecar it forked:
    (the connection, the sidecar's pid, its pidfd, what was read past the pid line). Raises
    :class:`Refused` while no sidecar was taken (a cold one may then start)."""
    try:
        dir_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        raise Refused("no-home", True) from None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    sock.settimeout(_TIMEOUT)
    cwd = -1
    try:
        try:
            sock.connect(f"/proc/self/fd/{dir_fd}/{WARM_SOCKET_FILE}")
        except OSError:
            raise Refused("no-server", True) from None
        payload = _request(argv).encode()
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        socket.send_fds(sock, [HEADER.pack(MAGIC, len(payload))], [0, 1, 2, cwd])
        sock.sendall(payload)
        buffer = bytearray()
        line = _line(sock, buffer)
        if line is None:
            raise Refused("no-reply", False)
        reply = decode_line(line)
        if "refused" in reply:
            reason = str(reply["refused"])[:64]
            raise Refused(reason, reason == "code-changed")  # a new server for the new code
        pid = reply.get("pid")
        if type(pid) is not int or pid <= 0:
            raise Refused("bad-reply", False)
        pidfd = os.pidfd_open(pid)
        sock.sendall(ACK)
    except (OSError, ProtocolError) as exc:
        sock.close()
        reason = "protocol-error" if isinstance(exc, ProtocolError) else "io-error"
        raise Refused(reason, False) from None
    except Refused:
        sock.close()
        raise
    finally:
        os.close(dir_fd)
        if cwd >= 0:
            os.close(cwd)
    return sock, pid, pidfd, buffer


def _wait(sock: socket.socket, pidfd: int, buffer: bytearray) -> NoReturn:
    """Forward signals to the sidecar until it ends; end as it did."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signum)

    for sig in FORWARDED:
        signal.signal(sig, forward)
    # pi's pipes are the sidecar's now; this process keeps only its stderr.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sock.settimeout(None)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    child_gone = False
    while True:
        events = dict(poller.poll(_LATE_STATUS * 1000 if child_gone else None))
        if not events and child_gone:
            _lost("the fork server did not report the sidecar's end")
        if events.get(pidfd):
            poller.unregister(pidfd)
            child_gone = True
        if events.get(sock.fileno()):
            line = _line(sock, buffer) if sock.fileno() >= 0 else None
            if line is None:
                poller.unregister(sock)
                if child_gone:
                    _lost("the fork server went away")
                _await_end(pidfd)
                _lost("the fork server went away")
            try:
                _end_as(decode_line(line))
            except ProtocolError:
                _lost("the fork server's report is not its protocol")


def _await_end(pidfd: int) -> None:
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.poll()


def _end_as(status: dict[str, object]) -> NoReturn:
    signum = status.get("signal")
    if type(signum) is int and 0 < signum < 65:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    code = status.get("exit")
    os._exit(code if type(code) is int and 0 <= code < 256 else 1)


def _lost(why: str) -> NoReturn:
    os.write(2, f"pi-guard: warm start: {why}\n".encode())
    os._exit(1)


def main(argv: list[str]) -> NoReturn:
    """``python -I -m guard._warm [pi-guard arguments]``: the launcher."""
    tail = tuple(argv)
    idle = warm_idle()
    if idle == 0 or tail not in SERVE_ARGV:
        cold(tail)
    try:
        home = resolve_home(None)
    except Exception:  # the cold sidecar reports a bad home as it always did
        cold(tail)
    try:
        sock, _pid, pidfd, buffer = handoff(home, tail)
    except Refused as refused:
        if refused.args[1]:
            start_server(home, idle)
        cold(tail)
    _wait(sock, pidfd, buffer)
