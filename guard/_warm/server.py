"""The fork server: one per guard home, it imported what a sidecar needs and forks one per pi.

Started in the background by a launcher that found none (``python -I -m guard._warm
--fork-server HOME IDLE``, in a session of its own, stdio on ``/dev/null``). It waits
:data:`START_DELAY` (the session that started it is starting its own sidecar), takes
``warm.lock`` (a second server ends here), imports the sidecar's modules and loads the
redaction rules in a thread of lower priority (joined: no thread is left when it forks),
then listens on ``warm.sock`` (0600, in the 0700 home no sandbox sees).

For each connection it checks the peer (:meth:`ForkServer.refusal`): the same uid, every
namespace and the cgroup its own, placed ``outside`` any sandbox, the same Python, the same
start environment, code unchanged since it imported it (:func:`~guard._warm.facts.code_stamp`),
limits it can give. Then it forks the sidecar (:mod:`guard._warm.child`), tells the launcher
its pid, releases it when the launcher takes it, reaps it and reports its end. It holds no
session's state, no key, and answers nothing about a tool call itself.

It ends when it was idle (no connection, no sidecar) for ``IDLE`` seconds, when its home or
its socket is gone or replaced, or once the code changed (it stops listening at once and ends
when its last sidecar has).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from guard._home import WARM_LOCK_FILE, WARM_SOCKET_FILE
from guard._warm import facts
from guard._warm.wire import (
    ACK,
    FDS,
    HEADER,
    MAGIC,
    MAX_PAYLOAD,
    ProtocolError,
    Request,
    encode_line,
)

__all__ = ["PRELOAD", "START_DELAY", "ForkServer", "main"]

START_DELAY = 1.0
"""Seconds a new fork server waits before it imports (the session that started it goes first)."""
PRELOAD = (
    "guard._cli",
    "guard._sidecar.handlers.methods",
    "guard._telemetry.config",
)
"""What a sidecar imports for its first answers (``tests/guard/warm`` checks it stays so)."""
_HANDSHAKE_TIMEOUT = 3.0
_TICK = 1.0
_STAMP_EVERY = 5.0
_HOME_WAIT = 60.0


def _preload() -> None:
    """Import the sidecar's modules and load the redaction rules, at a lower priority (Linux's
    nice value is per thread: the server's own thread, whose children inherit its priority,
    keeps the priority of the session that started it)."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            os.nice(10)
            import importlib

            for name in PRELOAD:
                importlib.import_module(name)
            from audit.log import redact_preview

            redact_preview("true", limit=8)  # compiles the audit preview's redaction rules
            _build_models()
        except BaseException as exc:  # reported by the caller
            failure.append(exc)

    worker = threading.Thread(target=work, name="warm-preload")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]


def _build_models() -> None:
    """Build the validators of every pydantic model imported so far. The wire and record
    models build theirs on first use (``defer_build``): each forked sidecar would otherwise
    build the same ones again (0.1-0.2 s of its first answers). A model that cannot be built
    yet (a reference still unresolved) stays as it is and builds on first use, as before."""
    from pydantic import BaseModel

    seen: set[type[BaseModel]] = set()
    stack: list[type[BaseModel]] = [BaseModel]
    while stack:
        for model in stack.pop().__subclasses__():
            if model not in seen:
                seen.add(model)
                stack.append(model)
    for model in seen:
        if not model.__pydantic_complete__:
            with contextlib.suppress(Exception):
                model.model_rebuild()


class _Session:
    """One forked sidecar: its launcher's connection (``None`` once it closed) and pidfd."""

    __slots__ = ("conn", "pid", "pidfd")

    def __init__(self, conn: socket.socket | None, pid: int, pidfd: int) -> None:
        self.conn, self.pid, self.pidfd = conn, pid, pidfd


class ForkServer:
    """The accept loop of one home's fork server (single-threaded)."""

    def __init__(self, home: Path, idle: float, listener: socket.socket, dir_fd: int) -> None:
        self.home, self.idle, self.listener, self.dir_fd = home, idle, listener, dir_fd
        self.socket_path = f"/proc/self/fd/{dir_fd}/{WARM_SOCKET_FILE}"
        self.socket_id = _file_id(self.socket_path)
        self.stamp = facts.code_stamp()
        self.roots = tuple(facts.code_roots())
        self.namespaces = facts.namespaces_of("self")
        self.cgroup = facts.cgroup_of("self")
        self.start_env = facts.startup_env(os.environ)
        self.limits = facts.rlimits()
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.sessions: dict[int, _Session] = {}  # by pidfd
        self.listening = True
        self.last_busy = time.monotonic()
        self.stamp_checked = time.monotonic()
        self.extra_fds: list[int] = []  # closed in every child (the lock)
        self.forks = 0

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        """Serve until idle, gone or stale (see the module docstring)."""
        while True:
            for key, _ in self.selector.select(_TICK):
                if key.fileobj is self.listener:
                    self._accept()
                elif isinstance(key.data, _Session) and key.fileobj == key.data.pidfd:
                    self._reap(key.data)
                elif isinstance(key.data, _Session):
                    self._launcher_spoke(key.data)
            now = time.monotonic()
            if self.sessions:
                self.last_busy = now
            if self.listening and not self._still_ours(now):
                self._stop_listening()
            if not self.sessions and (not self.listening or now - self.last_busy >= self.idle):
                return

    def _still_ours(self, now: float) -> bool:
        """The socket is still this server's and the home still where it was; the code is
        unchanged (checked every few seconds)."""
        if _file_id(self.socket_path) != self.socket_id:
            return False
        try:
            if os.stat(self.home).st_ino != os.fstat(self.dir_fd).st_ino:
                return False
        except OSError:
            return False
        if now - self.stamp_checked >= _STAMP_EVERY:
            self.stamp_checked = now
            return facts.code_stamp() == self.stamp
        return True

    def _stop_listening(self) -> None:
        self.listening = False
        self.selector.unregister(self.listener)
        if _file_id(self.socket_path) == self.socket_id:
            with contextlib.suppress(OSError):
                os.unlink(self.socket_path)
        self.listener.close()
        for fd in self.extra_fds:  # the lock: a server for the new code may start now
            with contextlib.suppress(OSError):
                os.close(fd)
        self.extra_fds = []

    # -- one connection ------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_busy = time.monotonic()
        conn.settimeout(_HANDSHAKE_TIMEOUT)
        fds: list[int] = []
        try:
            request, peer = self._receive(conn, fds)
            reason = self.refusal(peer, request, len(fds))
            if reason is not None:
                conn.sendall(encode_line({"refused": reason}))
                if reason == "code-changed":
                    self._stop_listening()
                conn.close()
                return
            self._fork(conn, fds, request, facts.parent_of(peer))
        except (OSError, ProtocolError) as exc:
            reason = exc.reason if isinstance(exc, ProtocolError) else "io-error"
            with contextlib.suppress(OSError):
                conn.sendall(encode_line({"refused": reason}))
            conn.close()
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _receive(self, conn: socket.socket, fds: list[int]) -> tuple[Request, int]:
        """The request and the peer's pid (-1: another user); the fds it sent go into
        ``fds`` (the caller closes them whatever happens)."""
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", creds)
        head, received, flags, _ = socket.recv_fds(conn, HEADER.size, FDS + 1)
        fds.extend(received)
        if uid != os.getuid():
            # Nothing of another user's is read, not even the payload.
            return Request((), {}, 0, 0, (), {}, "", "", ()), -1
        if flags & socket.MSG_CTRUNC or len(head) != HEADER.size:
            raise ProtocolError("bad-header")
        magic, length = HEADER.unpack(head)
        if magic != MAGIC or length > MAX_PAYLOAD:
            raise ProtocolError("bad-header")
        payload = bytearray()
        while len(payload) < length:
            chunk = conn.recv(min(65536, length - len(payload)))
            if not chunk:
                raise ProtocolError("short-payload")
            payload += chunk
        return Request.decode(bytes(payload)), pid

    def refusal(self, peer: int, request: Request, fd_count: int) -> str | None:
        """Why this peer gets no sidecar from here (a reason code), or ``None``.

        Every namespace must be this server's own, which is stricter than the approval port's
        placement (``guard/_approvals/peers.py``: ``outside`` is the same pid and user
        namespace): a bubblewrap sandbox, a command's layer (its own user and mount
        namespace) and an ``unshare`` all differ in one at least."""
        if peer <= 0:
            return "other-user" if peer == -1 else "peer-unknown"
        try:
            if facts.namespaces_of(peer) != self.namespaces:
                return "other-namespace"
            if facts.cgroup_of(peer) != self.cgroup:
                return "other-cgroup"
        except OSError:
            return "peer-unknown"
        if fd_count != FDS:
            return "bad-fds"
        if (request.python, request.version) != (sys.executable, sys.version):
            return "other-python"
        if request.roots != self.roots:
            return "other-code"
        if facts.startup_env(request.env) != self.start_env:
            return "other-start-environment"
        if request.nice < os.getpriority(os.PRIO_PROCESS, 0):
            return "higher-priority"
        for name, (_, hard) in request.rlimits.items():
            if name not in self.limits or _above(hard, self.limits[name][1]):
                return "higher-limits"
        if threading.active_count() != 1:
            return "threads"
        if facts.code_stamp() != self.stamp:
            return "code-changed"
        return None

    def _fork(self, conn: socket.socket, fds: list[int], request: Request, pi: int) -> None:
        go_r, go_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            from guard._warm.child import become_sidecar

            become_sidecar(self._closers(conn), fds, go_r, request, pi)
        os.close(go_r)
        self.forks += 1
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            os.close(go_w)  # the child reads EOF and ends untouched
            os.waitpid(pid, 0)
            raise
        session = _Session(None, pid, pidfd)
        self.sessions[pidfd] = session
        self.selector.register(pidfd, selectors.EVENT_READ, session)
        try:
            conn.sendall(encode_line({"pid": pid}))
            taken = conn.recv(1) == ACK
        except OSError:
            taken = False
        if taken:
            with contextlib.suppress(OSError):
                os.write(go_w, b"G")
        os.close(go_w)  # not taken: the sidecar reads EOF and ends without touching a thing
        if not taken:
            conn.close()
            return
        conn.settimeout(None)
        session.conn = conn
        self.selector.register(conn, selectors.EVENT_READ, session)

    def _closers(self, conn: socket.socket) -> list[Callable[[], None]]:
        """What a child closes before it becomes a sidecar: everything of the server's."""
        closers: list[Callable[[], None]] = [self.selector.close, conn.close]
        if self.listening:
            closers.append(self.listener.close)
        for session in self.sessions.values():
            closers.append(functools.partial(os.close, session.pidfd))
            if session.conn is not None:
                closers.append(session.conn.close)
        closers += [functools.partial(os.close, fd) for fd in [self.dir_fd, *self.extra_fds]]
        return closers

    def _launcher_spoke(self, session: _Session) -> None:
        assert session.conn is not None
        try:
            data = session.conn.recv(64)
        except OSError:
            data = b""
        if data:
            return  # nothing more is part of the protocol; ignored
        # The launcher is gone (killed): end its sidecar as pi's end would have.
        self.selector.unregister(session.conn)
        session.conn.close()
        session.conn = None
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(session.pidfd, signal.SIGTERM)

    def _reap(self, session: _Session) -> None:
        _, status = os.waitpid(session.pid, 0)
        self.selector.unregister(session.pidfd)
        os.close(session.pidfd)
        del self.sessions[session.pidfd]
        if os.WIFSIGNALED(status):
            message = {"signal": os.WTERMSIG(status)}
        else:
            message = {"exit": os.waitstatus_to_exitcode(status)}
        if session.conn is not None:
            with contextlib.suppress(OSError):
                session.conn.sendall(encode_line(message))
            self.selector.unregister(session.conn)
            session.conn.close()
        self.last_busy = time.monotonic()


def _above(limit: int, ceiling: int) -> bool:
    """``limit`` exceeds ``ceiling`` (-1 is infinity)."""
    if ceiling == -1:
        return False
    return limit == -1 or limit > ceiling


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _listen(dir_fd: int) -> socket.socket:
    """Bind ``warm.sock`` in the home (under the lock: a file left there is stale)."""
    path = f"/proc/self/fd/{dir_fd}/{WARM_SOCKET_FILE}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def _private_home(home: Path, wait: float) -> int:
    """An fd of ``home`` once it is a private directory of ours: the cold sidecar that
    started this server makes it (0700) when its imports are done; ends the process when
    that takes longer than ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            dir_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            dir_fd = -1
        if dir_fd >= 0:
            info = os.fstat(dir_fd)
            if info.st_uid == os.getuid() and not info.st_mode & 0o077:
                return dir_fd
            os.close(dir_fd)
        if time.monotonic() > deadline:
            os._exit(0)  # no private home of ours here: the next launch tries again
        time.sleep(0.25)


def main(args: list[str]) -> NoReturn:
    """``--fork-server HOME IDLE``: serve one home until idle; never raises."""
    usage = "pi-guard: error: --fork-server takes an absolute HOME and IDLE seconds > 0\n"
    try:
        home, idle = Path(args[0]), float(args[1])
    except (IndexError, ValueError):
        home, idle = Path(), 0.0
    if not home.is_absolute() or not idle > 0:
        with contextlib.suppress(OSError):
            os.write(2, usage.encode())
        os._exit(2)
    os.chdir("/")
    time.sleep(START_DELAY)
    dir_fd = _private_home(home, min(_HOME_WAIT, idle))  # never outlives its idle time
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
    lock = os.open(f"/proc/self/fd/{dir_fd}/{WARM_LOCK_FILE}", flags, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            os._exit(0)  # the home has its fork server
        os._exit(1)
    stamp = facts.code_stamp()
    try:
        _preload()
    except BaseException:
        os._exit(1)
    if facts.code_stamp() != stamp:
        os._exit(0)  # changed while it imported: what it holds may be half old
    try:
        listener = _listen(dir_fd)
    except OSError:
        os._exit(1)
    server = ForkServer(home, idle, listener, dir_fd)
    server.extra_fds.append(lock)
    server.stamp = stamp
    try:
        server.run()
    finally:
        if server.listening:
            server._stop_listening()
    os._exit(0)
