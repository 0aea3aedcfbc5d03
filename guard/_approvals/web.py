"""The approval page: ``pi-guard approvals serve``, every pending question of the home on 127.0.0.1.

Contract: :class:`ApprovalPage` serves one page and two JSON endpoints; it relays each answer to
the sidecar holding the question (approver ``web``) and never decides anything itself. Only the
operator can answer:

* a one-time login token (printed to the operator's terminal, never to anything the model
  reads) is traded at ``/login?token=…`` for a session cookie (``HttpOnly``,
  ``SameSite=Strict``, ``Path=/``); after :data:`MAX_FAILED_LOGINS` wrong tokens logins
  are locked;
* every request must name this server in ``Host`` (DNS rebinding), every answer must come
  with this server's ``Origin`` and the session's CSRF token (``X-CSRF-Token``); no CORS
  header is ever sent; the page runs under a strict Content-Security-Policy and writes
  text only through ``textContent``;
* an answer names the question's id *and* the digest it was shown: a stale page can never
  approve another call.

Every refusal is passed to ``on_refused`` (the CLI audits it as ``approval.refused``).
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from guard._approvals.home import ask_sidecar, pending_in
from guard._approvals.model import AnswerRequest
from guard._home import SESSIONS_DIR

__all__ = ["CSP", "MAX_FAILED_LOGINS", "ApprovalPage"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
MAX_FAILED_LOGINS = 5
MAX_BODY_BYTES = 16 * 1024
COOKIE = "pog_session"
_ASSETS = files("guard._approvals") / "page"
_STATIC = {"/": ("index.html", "text/html"), "/app.js": ("app.js", "text/javascript"),
           "/app.css": ("app.css", "text/css")}  # fmt: skip


class ApprovalPage:
    """See the module docstring. ``start()`` binds; ``url`` and ``login_url`` say where."""

    def __init__(
        self,
        home: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        on_refused: Callable[[str, str | None], None] = lambda why, approval_id: None,
    ) -> None:
        self.home = home
        self.host = host
        self._port = port
        self._on_refused = on_refused
        self._token: str | None = secrets.token_urlsafe(32)
        self._failed = 0
        self._sessions: dict[str, str] = {}  # cookie -> CSRF token
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        page = self

        class Handler(_Handler):
            owner = page

        server = ThreadingHTTPServer((self.host, self._port), Handler)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, name="approvals-page", daemon=True).start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @property
    def login_url(self) -> str:
        """The one-time login address (a new token each call: the old one stops working)."""
        with self._lock:
            self._token = secrets.token_urlsafe(32)
            self._failed = 0
            return f"{self.url}login?token={self._token}"

    # -- decisions (called from the handler's threads) ---------------------------------------

    def hosts(self) -> set[str]:
        names = {self.host, "localhost"} if self.host == "127.0.0.1" else {self.host}
        return {f"{name}:{self.port}" for name in names}

    def login(self, token: str) -> str | None:
        """A new session cookie for the right token (once); ``None`` and counted otherwise."""
        with self._lock:
            if self._failed >= MAX_FAILED_LOGINS:
                self._on_refused("login-locked", None)
                return None
            expected = self._token
            if expected is None or not hmac.compare_digest(token.encode(), expected.encode()):
                self._failed += 1
                self._on_refused("bad-login", None)
                return None
            self._token = None  # one time
            cookie = secrets.token_urlsafe(32)
            self._sessions[cookie] = secrets.token_urlsafe(32)
            return cookie

    def csrf_for(self, cookie: str | None) -> str | None:
        with self._lock:
            return self._sessions.get(cookie or "")

    def listing(self) -> list[dict[str, Any]]:
        return [p.model_dump(mode="json") for p in pending_in(self.home)]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """Relay an answer to the sidecar that holds the question (approver ``web``)."""
        sidecar = body.pop("sidecar", None)
        try:
            request = AnswerRequest.model_validate(body, by_alias=True, by_name=False)
        except ValidationError as exc:
            where = ".".join(str(x) for x in exc.errors()[0]["loc"])
            return {"error": f"invalid {where}"}
        holders = [d for d in (self.home / SESSIONS_DIR).glob("*") if d.name == sidecar]
        if not isinstance(sidecar, str) or not holders:
            self._on_refused("unknown-id", request.id)
            return {"outcome": "unknown-id"}
        reply = ask_sidecar(
            holders[0], {"op": "answer", "approver": "web", **request.model_dump(mode="json")}
        )
        if reply is None:  # its sidecar ended: the question went with it
            return {"outcome": "withdrawn"}
        outcome = reply.get("outcome")
        if not isinstance(outcome, str):
            return {"error": str(reply.get("error", "refused"))}
        return {"outcome": outcome}


class _Handler(BaseHTTPRequestHandler):
    owner: ApprovalPage
    server_version = "pi-operator-guard"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are not logged (a login URL holds the token)."""

    # -- the checks every request passes -----------------------------------------------------

    def _host_ok(self) -> bool:
        if self.headers.get("Host") in self.owner.hosts():
            return True
        self.owner._on_refused("bad-host", None)
        self._send(HTTPStatus.MISDIRECTED_REQUEST, {"error": "bad-host"})
        return False

    def _cookie(self) -> str | None:
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return value
        return None

    def _session(self) -> tuple[str, str] | None:
        cookie = self._cookie()
        csrf = self.owner.csrf_for(cookie)
        if cookie is None or csrf is None:
            self.owner._on_refused("no-session", None)
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "no-session"})
            return None
        return cookie, csrf

    # -- GET -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        if url.path == "/login":
            token = (parse_qs(url.query).get("token") or [""])[0]
            cookie = self.owner.login(token)
            if cookie is None:
                self._send(HTTPStatus.FORBIDDEN, {"error": "bad-login"})
                return
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", "/")
            self.send_header("Set-Cookie", f"{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/")
            self._common_headers()
            self.end_headers()
            return
        if url.path in _STATIC:
            name, kind = _STATIC[url.path]
            self._send_bytes(HTTPStatus.OK, (_ASSETS / name).read_bytes(), kind)
            return
        if url.path == "/api/pending":
            session = self._session()
            if session is None:
                return
            self._send(HTTPStatus.OK, {"csrf": session[1], "pending": self.owner.listing()})
            return
        self._send(HTTPStatus.NOT_FOUND, {"error": "not-found"})

    # -- POST ----------------------------------------------------------------------------------

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        if urlsplit(self.path).path != "/api/answer":
            self._send(HTTPStatus.NOT_FOUND, {"error": "not-found"})
            return
        origin = self.headers.get("Origin")
        if origin is None or origin.removeprefix("http://") not in self.owner.hosts():
            self.owner._on_refused("bad-origin", None)
            self._send(HTTPStatus.FORBIDDEN, {"error": "bad-origin"})
            return
        session = self._session()
        if session is None:
            return
        sent = self.headers.get("X-CSRF-Token") or ""
        if not hmac.compare_digest(sent.encode(), session[1].encode()):
            self.owner._on_refused("bad-csrf", None)
            self._send(HTTPStatus.FORBIDDEN, {"error": "bad-csrf"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if (self.headers.get("Content-Type") or "").split(";")[0] != "application/json" or not (
            0 < length <= MAX_BODY_BYTES
        ):
            self._send(HTTPStatus.BAD_REQUEST, {"error": "bad-request"})
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send(HTTPStatus.BAD_REQUEST, {"error": "bad-request"})
            return
        self._send(HTTPStatus.OK, self.owner.answer(body))

    # -- replies -------------------------------------------------------------------------------

    def _common_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")

    def _send(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        self._send_bytes(status, json.dumps(body).encode(), "application/json")

    def _send_bytes(self, status: HTTPStatus, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self._common_headers()
        self.end_headers()
        self.wfile.write(data)
