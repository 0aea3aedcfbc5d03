"""The approval page: ``pi-guard approvals serve``, every pending question of the home on
``http://localhost:<port>`` (bound to 127.0.0.1).

Contract: :class:`ApprovalPage` serves one page and its JSON endpoints; it relays each answer
to the sidecar holding the question (approver ``web``) and never decides anything itself.
Only the operator can answer:

* a one-time login token (printed to the operator's terminal, never to anything the model
  reads) is traded at ``/login?token=…`` for a session cookie (``HttpOnly``,
  ``SameSite=Strict``, ``Path=/``); after :data:`MAX_FAILED_LOGINS` wrong tokens logins
  are locked; a wrong token counts only when it came from a process outside any bubblewrap
  sandbox (the TCP peer found and placed by ``peers.py``): a command of the agent's sandbox
  shares loopback with the page in the ``open`` network and must not lock the operator out;
* every request must name this server in ``Host`` (DNS rebinding), every POST must come
  with this server's ``Origin`` and the session's CSRF token (``X-CSRF-Token``); no CORS
  header is ever sent; the page runs under a strict Content-Security-Policy and writes
  text only through ``textContent``;
* an answer names the question's id *and* the digest it was shown: a stale page can never
  approve another call.

The operator's passkey (WebAuthn, whose RP id cannot be an IP address: hence ``localhost``):
``/api/pending`` names the active credentials enrolled for this page's origin
(``operator``); with any, the page's Yes first asks the sidecar for the approval statement
(``/api/statement``, relayed as op ``statement``), has the authenticator sign its challenge,
and sends the assertion with the answer (``evidenceId``, ``operatorSignature``): the sidecar
checks it. In enrolment mode (``enrol=``, ``pi-guard operator enroll``) the page serves one
ceremony per login instead: ``/api/enrol`` gives the creation options (a fresh, single-use
challenge) and takes the authenticator's answer, checked by :func:`enrolled_credential` and
handed to :attr:`Enrolment.keep`.

Every refusal is passed to ``on_refused`` (the CLI audits it as ``approval.refused``); one
from a sandboxed peer as ``sandboxed-peer``, one whose peer is not found as ``unknown-peer``.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from audit.wire import EvidenceId, Sha256, b64url_encode, utc_now
from guard._approvals.home import ask_sidecar, pending_in, sidecar_about
from guard._approvals.local import page_key, serve_in_thread
from guard._approvals.model import AnswerRequest, ApprovalId
from guard._approvals.peers import PeerPlace, tcp_peer_place
from guard._errors import GuardError
from guard._evidence import KEYRING_FILE, PublicKeyring
from guard._home import SESSIONS_DIR
from guard._logging import get_logger
from guard._operator import (
    OperatorCredential,
    creation_options,
    enrolled_credential,
    statement_challenge,
)

__all__ = ["CSP", "LOCAL_RP_ID", "MAX_FAILED_LOGINS", "ApprovalPage", "Enrolment", "enrolled_port"]

_log = get_logger("guard.approvals.web")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
MAX_FAILED_LOGINS = 5
MAX_BODY_BYTES = 16 * 1024
COOKIE = "pog_session"
LOCAL_RP_ID = "localhost"
"""The WebAuthn RP id (and the origin's host) of a page bound to 127.0.0.1."""
_ASSETS = files("guard._approvals") / "page"
_CSS = ("app.css", "text/css")
_STATIC = {"/": ("index.html", "text/html"), "/app.js": ("app.js", "text/javascript"),
           "/app.css": _CSS}  # fmt: skip
_ENROL_STATIC = {"/": ("enrol.html", "text/html"), "/enrol.js": ("enrol.js", "text/javascript"),
                 "/app.css": _CSS}  # fmt: skip

Reply = tuple[HTTPStatus, dict[str, Any]]


def _counts(place: PeerPlace) -> bool:
    """Whether a wrong login from ``place`` counts against the lock-out: only from a process
    found outside any bubblewrap sandbox (a browser's own sandbox is not the agent's)."""
    return place in ("outside", "other-namespace")


def _named(why: str, place: PeerPlace) -> str:
    """The refusal's reason: the sender's place when it is sandboxed or not found."""
    return {"bwrap-sandbox": "sandboxed-peer", "unknown": "unknown-peer"}.get(place, why)


@dataclass
class Enrolment:
    """One passkey enrolment served by the page (``pi-guard operator enroll``).

    ``keep`` stores the verified credential (the CLI's ``guard.operators.enroll``) and returns
    what was stored; it may raise a :class:`GuardError` (already enrolled, keyring unusable).
    The first ceremony that ends, kept or refused, sets :meth:`wait`'s answer.
    """

    label: str
    keep: Callable[[OperatorCredential], OperatorCredential]
    now: Callable[[], datetime] = utc_now
    _done: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _kept: OperatorCredential | None = field(default=None, init=False, repr=False)
    _failed: GuardError | None = field(default=None, init=False, repr=False)

    def finish(self, kept: OperatorCredential | None, failed: GuardError | None) -> None:
        """Record the first ceremony's end (later ones change nothing)."""
        if not self._done.is_set():
            self._kept, self._failed = kept, failed
            self._done.set()

    @property
    def done(self) -> bool:
        """Whether a ceremony ended (kept or refused)."""
        return self._done.is_set()

    def wait(self, timeout: float) -> OperatorCredential | None:
        """The credential kept; ``None`` when no ceremony ended in ``timeout`` seconds.
        Raises the refusal when the ceremony was refused."""
        if not self._done.wait(timeout):
            return None
        if self._failed is not None:
            raise self._failed
        return self._kept


class _Relayed(BaseModel):
    """What the page takes from a sidecar's ``statement`` reply (other members ignored)."""

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        extra="ignore",
        alias_generator=to_camel,
        validate_by_alias=True,
        defer_build=True,
    )

    outcome: Literal["ready"]
    evidence_id: EvidenceId
    statement: dict[str, Any]
    challenge: str = Field(pattern=r"^[A-Za-z0-9_-]{43}$")
    rp_id: str
    allow_credentials: list[str]
    timeout_ms: int = Field(ge=1, le=86_400_000)


class _Asked(BaseModel):
    """A statement request as the page's script sends it."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", defer_build=True)

    sidecar: str = Field(max_length=128)
    id: ApprovalId
    digest: Sha256


class ApprovalPage:
    """See the module docstring. ``start()`` binds; ``url`` and ``login_url`` say where.

    ``enrol``: serve one passkey enrolment (see :class:`Enrolment`) instead of the questions.
    """

    def __init__(
        self,
        home: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        on_refused: Callable[[str, str | None], None] = lambda why, approval_id: None,
        enrol: Enrolment | None = None,
    ) -> None:
        self.home = home
        self.host = host
        self._port = port
        self._on_refused = on_refused
        self.enrol = enrol
        self._token: str | None = secrets.token_urlsafe(32)
        self._failed = 0
        self._sessions: dict[str, str] = {}  # cookie -> CSRF token
        self._challenges: dict[str, bytes] = {}  # cookie -> its enrolment challenge
        self._ceremonies: set[str] = set()  # cookies whose one ceremony ended
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._stop: Callable[[], None] = lambda: None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        page = self

        class Handler(_Handler):
            owner = page

        server = ThreadingHTTPServer((self.host, self._port), Handler)
        server.daemon_threads = True
        self._server = server
        self._stop = serve_in_thread(server, "approvals-page")

    def close(self) -> None:
        if self._server is not None:
            self._stop()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.server_address[1])

    @property
    def rp_id(self) -> str:
        """The page's host name in its origin, and the WebAuthn RP id."""
        return LOCAL_RP_ID if self.host == "127.0.0.1" else self.host

    @property
    def origin(self) -> str:
        """``http://localhost:<port>`` (an operator credential is enrolled for exactly one)."""
        return f"http://{self.rp_id}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/"

    @property
    def login_url(self) -> str:
        """The one-time login address (a new token each call: the old one stops working)."""
        with self._lock:
            self._token = secrets.token_urlsafe(32)
            self._failed = 0
            return f"{self.url}login?token={self._token}"

    # -- decisions (called from the handler's threads) ---------------------------------------

    def hosts(self) -> set[str]:
        names = {self.host, LOCAL_RP_ID} if self.host == "127.0.0.1" else {self.host}
        return {f"{name}:{self.port}" for name in names}

    def login(self, token: str, placed: Callable[[], PeerPlace] = lambda: "outside") -> str | None:
        """A new session cookie for the right token (once); ``None`` otherwise. A wrong token
        counts against the lock-out only when ``placed`` (where the request came from, asked
        only then) says the sender runs outside any bubblewrap sandbox."""
        with self._lock:
            expected = self._token
            if (
                self._failed < MAX_FAILED_LOGINS
                and expected is not None
                and hmac.compare_digest(token.encode(), expected.encode())
            ):
                self._token = None  # one time
                cookie = secrets.token_urlsafe(32)
                self._sessions[cookie] = secrets.token_urlsafe(32)
                return cookie
        place = placed()  # outside the lock: it reads /proc
        with self._lock:
            if self._failed >= MAX_FAILED_LOGINS:
                self._on_refused(_named("login-locked", place), None)
            elif not _counts(place):
                self._on_refused(_named("bad-login", place), None)
            else:
                self._failed += 1
                # The wrong token that locks logins is audited as the lock-out itself.
                locks = self._failed == MAX_FAILED_LOGINS
                self._on_refused("login-locked-out" if locks else "bad-login", None)
        return None

    def refuse(self, why: str, approval_id: str | None, placed: Callable[[], PeerPlace]) -> None:
        """Pass a refusal on, named for a sender that is sandboxed or not found."""
        self._on_refused(_named(why, placed()), approval_id)

    def csrf_for(self, cookie: str | None) -> str | None:
        with self._lock:
            return self._sessions.get(cookie or "")

    def credentials(self) -> dict[str, OperatorCredential]:
        """Every enrolled operator credential (active and removed); none without a readable
        keyring (no signature can be checked then either)."""
        try:
            return PublicKeyring.load(self.home / KEYRING_FILE).operators
        except GuardError as exc:
            _log.debug("approvals.page.no_keyring", error=str(exc))
            return {}

    def operator(self) -> dict[str, Any] | None:
        """``/api/pending``'s ``operator``: the RP id and the active credentials enrolled for
        this page's origin; ``None`` when there are none (Yes is then not passkey-signed)."""
        ids = [
            c.credential_id
            for c in self.credentials().values()
            if c.status == "active" and c.origin == self.origin
        ]
        return {"rpId": self.rp_id, "credentials": ids} if ids else None

    def enrolled_elsewhere(self) -> list[str]:
        """``/api/pending``'s ``enrolledElsewhere``: the origins active passkeys are enrolled
        for when none is for this page's (a passkey signs for its own origin only, so the
        page says where they are rather than sending the operator to enrol again)."""
        active = [c for c in self.credentials().values() if c.status == "active"]
        if any(c.origin == self.origin for c in active):
            return []
        return sorted({c.origin for c in active})

    def listing(self) -> list[dict[str, Any]]:
        """Every pending question, each with whose it is: its pi session's folder (``cwd``,
        asked of its sidecar once a listing; ``None`` when it does not say)."""
        folders: dict[str, str | None] = {}
        listed = []
        for item in pending_in(self.home):
            if item.sidecar not in folders:
                cwd = sidecar_about(self.home / SESSIONS_DIR / item.sidecar).get("cwd")
                folders[item.sidecar] = cwd if isinstance(cwd, str) else None
            listed.append({**item.model_dump(mode="json"), "cwd": folders[item.sidecar]})
        return listed

    def _holder(self, sidecar: object, approval_id: str | None) -> Path | None:
        """The live-or-not sidecar directory named ``sidecar``; ``None`` (refused) otherwise."""
        holders = [d for d in (self.home / SESSIONS_DIR).glob("*") if d.name == sidecar]
        if not isinstance(sidecar, str) or not holders:
            self._on_refused("unknown-id", approval_id)
            return None
        return holders[0]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """Relay an answer to the sidecar that holds the question (approver ``web``)."""
        sidecar = body.pop("sidecar", None)
        try:
            request = AnswerRequest.model_validate(body, by_alias=True, by_name=False)
        except ValidationError as exc:
            where = ".".join(str(x) for x in exc.errors()[0]["loc"])
            return {"error": f"invalid {where}"}
        holder = self._holder(sidecar, request.id)
        if holder is None:
            return {"outcome": "unknown-id"}
        relayed = {"op": "answer", "approver": "web", "pageKey": page_key(holder)}
        reply = ask_sidecar(holder, {**relayed, **request.model_dump(mode="json")})
        if reply is None:  # its sidecar ended: the question went with it
            return {"outcome": "withdrawn"}
        outcome = reply.get("outcome")
        if not isinstance(outcome, str):
            return {"error": str(reply.get("error", "refused"))}
        return {"outcome": outcome}

    def statement(self, body: dict[str, Any]) -> dict[str, Any]:
        """Relay a statement request (op ``statement``): what the passkey is to sign for the
        question's Yes, limited to the credentials enrolled for this page's origin."""
        try:
            asked = _Asked.model_validate(body)
        except ValidationError as exc:
            where = ".".join(str(x) for x in exc.errors()[0]["loc"])
            return {"error": f"invalid {where}"}
        holder = self._holder(asked.sidecar, asked.id)
        if holder is None:
            return {"outcome": "unknown-id"}
        reply = ask_sidecar(holder, {"op": "statement", "id": asked.id, "digest": asked.digest})
        if reply is None:
            return {"outcome": "withdrawn"}
        outcome = reply.get("outcome")
        if outcome != "ready":
            if isinstance(outcome, str):
                return {"outcome": outcome}
            return {"error": str(reply.get("error", "refused"))}
        try:
            ready = _Relayed.model_validate(reply, by_alias=True, by_name=False)
        except ValidationError as exc:
            where = ".".join(str(x) for x in exc.errors()[0]["loc"])
            _log.warning("approvals.page.bad_statement", sidecar=holder.name, where=where)
            return {"error": f"the sidecar's statement is invalid at {where}"}
        if b64url_encode(statement_challenge(ready.statement)) != ready.challenge:
            return {"error": "the sidecar's challenge is not its statement's"}
        if ready.rp_id != self.rp_id:
            return {"error": f"the sidecar's RP id is {ready.rp_id}, this page's {self.rp_id}"}
        mine = (self.operator() or {}).get("credentials", [])
        allowed = [c for c in ready.allow_credentials if c in mine]
        if not allowed:
            return {"outcome": "no-operator"}
        return {
            "outcome": "ready",
            "evidenceId": ready.evidence_id,
            "statement": ready.statement,
            "challenge": ready.challenge,
            "rpId": ready.rp_id,
            "allowCredentials": allowed,
            "timeoutMs": ready.timeout_ms,
        }

    # -- enrolment (``enrol`` given) -----------------------------------------------------------

    def enrolment_options(self, cookie: str) -> Reply:
        """Creation options with a fresh challenge (replacing one not yet answered)."""
        assert self.enrol is not None
        with self._lock:
            if cookie in self._ceremonies:
                return HTTPStatus.CONFLICT, {"error": "ceremony-done"}
            challenge = secrets.token_bytes(32)
            self._challenges[cookie] = challenge
        listed = tuple(self.credentials())
        options = creation_options(
            challenge, rp_id=self.rp_id, label=self.enrol.label, exclude=listed
        )
        return HTTPStatus.OK, {"label": self.enrol.label, "origin": self.origin,
                               "options": options}  # fmt: skip

    def enrolment_answer(
        self, cookie: str, body: dict[str, Any]
    ) -> tuple[Reply, OperatorCredential | None, GuardError | None]:
        """Check the authenticator's answer against the session's challenge (used up either
        way: one ceremony per login) and keep the credential; the reply, then what was kept
        or why not (the handler settles :class:`Enrolment` once the reply is sent)."""
        enrol = self.enrol
        assert enrol is not None
        with self._lock:
            challenge = self._challenges.pop(cookie, None)
            if challenge is None:
                return (HTTPStatus.CONFLICT, {"error": "no-ceremony"}), None, None
            self._ceremonies.add(cookie)
        try:
            made = enrolled_credential(
                body,
                challenge=challenge,
                rp_id=self.rp_id,
                origin=self.origin,
                label=enrol.label,
                now=enrol.now(),
            )
            kept = enrol.keep(made)
        except GuardError as exc:
            return (HTTPStatus.OK, {"outcome": "refused", "reason": str(exc)}), None, exc
        said = {"outcome": "enrolled", "credentialId": kept.credential_id, "label": kept.label}
        return (HTTPStatus.OK, said), kept, None


def enrolled_port(home: Path) -> int | None:
    """The port of the origin the newest active passkey of ``home`` was enrolled for (on
    ``localhost``), so the page serves where its signatures verify; ``None`` without one."""
    try:
        credentials = PublicKeyring.load(home / KEYRING_FILE).operators.values()
    except GuardError:
        return None
    local = [c for c in credentials if c.status == "active" and c.rp_id == LOCAL_RP_ID]
    if not local:
        return None
    newest = max(local, key=lambda c: c.enrolled_at_iso)
    port = urlsplit(newest.origin).port
    return 80 if port is None else port


_BAD_LOGIN_PAGE = (
    b'<!doctype html><html lang="en"><head><meta charset="utf-8">'
    b"<title>operator-guard: login link used or expired</title></head><body>"
    b"<h1>This login link was used already, or is no longer valid</h1>"
    b"<p>Each login link works once. Run <code>/guard</code> in pi for a new login link (or"
    b" look at what <code>pi-guard approvals serve</code> printed to its terminal).</p>"
    b"</body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    owner: ApprovalPage
    server_version = "pi-operator-guard"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are not logged (a login URL holds the token)."""

    # -- the checks every request passes -----------------------------------------------------

    def _placed(self) -> PeerPlace:
        """Where the sender of this request runs (looked up once, on the first refusal)."""
        place: PeerPlace | None = getattr(self, "_place", None)
        if place is None:
            peer = (str(self.client_address[0]), int(self.client_address[1]))
            bound = self.server.server_address  # (address, port): an AF_INET server
            assert isinstance(bound, tuple)
            place = tcp_peer_place(peer, (str(bound[0]), int(bound[1])))
            self._place = place
        return place

    def _host_ok(self) -> bool:
        if self.headers.get("Host") in self.owner.hosts():
            return True
        self.owner.refuse("bad-host", None, self._placed)
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
            self.owner.refuse("no-session", None, self._placed)
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "no-session"})
            return None
        return cookie, csrf

    def _routes(self) -> tuple[dict[str, tuple[str, str]], set[str]]:
        """This mode's static files and POST endpoints."""
        if self.owner.enrol is not None:
            return _ENROL_STATIC, {"/api/enrol"}
        return _STATIC, {"/api/answer", "/api/statement"}

    # -- GET -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        static, _ = self._routes()
        if url.path == "/login":
            self._login(url.query)
        elif url.path in static:
            name, kind = static[url.path]
            self._send_bytes(HTTPStatus.OK, (_ASSETS / name).read_bytes(), kind)
        elif url.path == "/api/pending" and self.owner.enrol is None:
            session = self._session()
            if session is not None:
                self._send(HTTPStatus.OK, {"csrf": session[1], "pending": self.owner.listing(),
                                           "operator": self.owner.operator(),
                                           "enrolledElsewhere": self.owner.enrolled_elsewhere(),
                                           "port": self.owner.port})  # fmt: skip
        elif url.path == "/api/enrol" and self.owner.enrol is not None:
            session = self._session()
            if session is not None:
                status, body = self.owner.enrolment_options(session[0])
                self._send(status, {"csrf": session[1], **body})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": "not-found"})

    def _login(self, query: str) -> None:
        token = (parse_qs(query).get("token") or [""])[0]
        cookie = self.owner.login(token, self._placed)
        if cookie is None:
            # A person opened it: a page in words, not {"error": "bad-login"}.
            self._send_bytes(HTTPStatus.FORBIDDEN, _BAD_LOGIN_PAGE, "text/html")
            return
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", "/")
        self.send_header("Set-Cookie", f"{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/")
        self._common_headers()
        self.end_headers()

    # -- POST ----------------------------------------------------------------------------------

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        if path not in self._routes()[1]:
            self._send(HTTPStatus.NOT_FOUND, {"error": "not-found"})
            return
        origin = self.headers.get("Origin")
        if origin is None or origin.removeprefix("http://") not in self.owner.hosts():
            self.owner.refuse("bad-origin", None, self._placed)
            self._send(HTTPStatus.FORBIDDEN, {"error": "bad-origin"})
            return
        session = self._session()
        if session is None:
            return
        sent = self.headers.get("X-CSRF-Token") or ""
        if not hmac.compare_digest(sent.encode(), session[1].encode()):
            self.owner.refuse("bad-csrf", None, self._placed)
            self._send(HTTPStatus.FORBIDDEN, {"error": "bad-csrf"})
            return
        body = self._json_body()
        if body is None:
            self._send(HTTPStatus.BAD_REQUEST, {"error": "bad-request"})
        elif path == "/api/answer":
            self._send(HTTPStatus.OK, self.owner.answer(body))
        elif path == "/api/statement":
            self._send(HTTPStatus.OK, self.owner.statement(body))
        else:
            reply, kept, failed = self.owner.enrolment_answer(session[0], body)
            self._send(*reply)
            self.wfile.flush()
            if self.owner.enrol is not None and (kept is not None or failed is not None):
                self.owner.enrol.finish(kept, failed)  # after the reply: the CLI may close

    def _json_body(self) -> dict[str, Any] | None:
        """The request's JSON object (``application/json``, at most :data:`MAX_BODY_BYTES`)."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if (self.headers.get("Content-Type") or "").split(";")[0] != "application/json" or not (
            0 < length <= MAX_BODY_BYTES
        ):
            return None
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

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
