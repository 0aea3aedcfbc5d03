"""The second terminal's way in: a Unix socket in the sidecar's own directory of the guard home.

Contract: :class:`LocalApprovals` serves one JSON request per connection (one line in, one line
out) on ``<session dir>/approvals.sock``: ``{"op": "list"}`` gives the pending questions,
``{"op": "answer", "id", "digest", "decision", "reason", "approver"}`` answers one as
approver ``cli``, or ``web`` when it came through a page: the page shows ``pageKey``, the key
this sidecar writes beside its socket (``page.key``, ``0600``), which no sandbox sees;
``{"op": "state", "id"}`` says what became of one without answering it.
Only the operator reaches it: the guard home is hidden from the agent's sandbox and refused
to pi's file tools, the socket is ``0600`` in a ``0700`` directory, and a peer of another
user is refused (``SO_PEERCRED``), and so is a peer in another pid or user namespace: every
command of the agent's sandbox runs in one, and may reach the socket of a home it does not
hide (another guard home outside ``$HOME``). The path is bound and reached through the directory's
descriptor (``/proc/self/fd/N/…``): a Unix socket path is limited to 107 bytes, a home is not.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import selectors
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from audit import JsonInputError
from audit.wire import load_json
from guard._approvals.model import AnswerRequest, Approver
from guard._approvals.peers import place_of
from guard._home import APPROVALS_SOCKET_FILE, PAGE_KEY_FILE

if TYPE_CHECKING:
    from guard._approvals.broker import ApprovalBroker

__all__ = [
    "MAX_REQUEST_BYTES",
    "PAGE_KEY_NAME",
    "SOCKET_NAME",
    "LocalApprovals",
    "ask_local",
    "page_key",
    "serve_in_thread",
]

SOCKET_NAME = APPROVALS_SOCKET_FILE
PAGE_KEY_NAME = PAGE_KEY_FILE
MAX_REQUEST_BYTES = 64 * 1024


def serve_in_thread(server: socketserver.TCPServer, name: str) -> Callable[[], None]:
    """Serve ``server`` on a daemon thread until the function returned is called; that
    function wakes the thread at once (a pipe watched beside the socket), waits for it and
    closes the server. ``serve_forever`` would instead poll for a shutdown: idle wake-ups all
    session long, and every sidecar's exit (every pi session's end) waiting for the next one."""
    wake, woken = os.pipe()
    done = threading.Event()

    def loop() -> None:
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(server.fileno(), selectors.EVENT_READ)
                selector.register(wake, selectors.EVENT_READ)
                while not any(key.fd == wake for key, _ in selector.select()):
                    _take_one(server)
        finally:
            done.set()

    def stop() -> None:
        os.write(woken, b"\0")
        done.wait()
        os.close(wake)
        os.close(woken)
        server.server_close()

    threading.Thread(target=loop, name=name, daemon=True).start()
    return stop


def _take_one(server: socketserver.BaseServer) -> None:
    """One connection, as ``serve_forever`` takes it (public methods only)."""
    try:
        request, address = server.get_request()
    except OSError:
        return
    if not server.verify_request(request, address):
        server.shutdown_request(request)
        return
    try:
        server.process_request(request, address)
    except Exception:
        server.handle_error(request, address)
        server.shutdown_request(request)


@contextlib.contextmanager
def _via_fd(directory: Path) -> Iterator[str]:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET_NAME}"
    finally:
        os.close(fd)


def _peer(conn: socket.socket) -> tuple[int, int]:
    """The peer's pid (in our pid namespace; 0 when it has none here) and uid."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", creds)
    return int(pid), int(uid)


def page_key(directory: Path) -> str | None:
    """The key a page relays its answers with to the sidecar of ``directory`` (``None``:
    none there, the sidecar ended or never listened)."""
    try:
        with open(directory / PAGE_KEY_NAME, encoding="ascii") as handle:
            return handle.read(256).strip() or None
    except (OSError, UnicodeDecodeError):
        return None


class LocalApprovals:
    """The socket listener of one sidecar (a thread); ``on_refused`` hears every refusal."""

    def __init__(
        self,
        directory: Path,
        broker: ApprovalBroker,
        on_refused: Callable[[str, str, Approver], None] = lambda why, detail, who: None,
        about: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        self.directory = directory
        self.path = directory / SOCKET_NAME
        self._broker = broker
        self._on_refused = on_refused
        self._about = about  # op ``about``: whose session this is (its id, folder, page)
        self._stop: Callable[[], None] | None = None
        self._page_key = secrets.token_urlsafe(32)

    def start(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = self.directory / PAGE_KEY_NAME
        with contextlib.suppress(FileNotFoundError):
            key.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(key, flags, 0o600), "w", encoding="ascii") as handle:
            handle.write(self._page_key + "\n")
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                reply = outer._serve(self.connection, self.rfile.readline(MAX_REQUEST_BYTES + 1))
                self.wfile.write(json.dumps(reply).encode() + b"\n")

        with _via_fd(self.directory) as where:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(where)
            old = os.umask(0o177)
            try:
                server = socketserver.ThreadingUnixStreamServer(where, Handler)
            finally:
                os.umask(old)
        server.daemon_threads = True
        self._stop = serve_in_thread(server, "approvals-local")

    def _serve(self, conn: socket.socket, line: bytes) -> dict[str, Any]:
        pid, uid = _peer(conn)
        if uid != os.getuid():
            self._on_refused("other-user", "", "cli")
            return {"error": "refused"}
        if place_of(pid) != "outside":
            # A sandboxed command that reached a socket (another home's, one not hidden):
            # it is never the operator, whatever it asks.
            self._on_refused("sandboxed-peer", "", "cli")
            return {"error": "refused"}
        if len(line) > MAX_REQUEST_BYTES:
            return {"error": "too-large"}
        try:
            request = load_json(line, max_bytes=MAX_REQUEST_BYTES)
        except JsonInputError:
            request = None
        if not isinstance(request, dict):
            return {"error": "not-json"}
        if request.get("op") == "about":
            return {"about": self._about()}
        if request.get("op") == "list":
            return {"pending": [p.model_dump(mode="json") for p in self._broker.pending()]}
        if request.get("op") == "state" and isinstance(request.get("id"), str):
            return {"state": self._broker.state(request["id"][:64])}
        if request.get("op") == "statement":
            approval_id, digest = request.get("id"), request.get("digest")
            if not isinstance(approval_id, str) or not isinstance(digest, str):
                return {"error": "invalid id"}
            reply = self._broker.statement(approval_id[:64], digest[:80])
            if reply.get("outcome") != "ready":
                self._on_refused(str(reply.get("outcome")), approval_id[:64], "web")
            return reply
        if request.get("op") == "answer":
            try:
                answer = AnswerRequest.model_validate(
                    {k: v for k, v in request.items() if k not in ("op", "approver", "pageKey")},
                    by_alias=True,
                    by_name=False,
                )
            except ValidationError as exc:
                where = ".".join(str(x) for x in exc.errors()[0]["loc"])
                return {"error": f"invalid {where}"}
            # web only through a page: it shows the key this sidecar wrote beside its socket
            # (the guard home, which no sandbox sees); the client's word alone is cli.
            key = request.get("pageKey")
            through_page = isinstance(key, str) and hmac.compare_digest(
                key.encode(), self._page_key.encode()
            )
            approver: Approver = (
                "web" if request.get("approver") == "web" and through_page else "cli"
            )
            outcome = self._broker.answer(answer, approver)
            if outcome != "accepted":
                self._on_refused(outcome, answer.id, approver)
            return {"outcome": outcome}
        return {"error": "unknown-op"}

    def close(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            (self.directory / PAGE_KEY_NAME).unlink()


def ask_local(directory: Path, request: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """Send one request to the sidecar whose directory is ``directory``; its reply.

    Raises :class:`OSError` when no sidecar listens there (it ended, or never had the port).
    """
    with _via_fd(directory) as where, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(where)
        conn.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    reply = json.loads(data or b"{}")
    return reply if isinstance(reply, dict) else {"error": "not-an-object"}
