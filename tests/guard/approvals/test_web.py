"""The approval page over HTTP, attacked as the agent on the same machine would: without the
token, with a guessed or used one, cross-origin, through a rebinding ``Host``, without the
CSRF token, for another question or digest, replayed. Each is refused and audited."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from audit.verify import read_records
from guard._approvals.web import CSP, MAX_FAILED_LOGINS, ApprovalPage
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import result


@dataclass
class Page:
    page: ApprovalPage
    sidecar: Sidecar
    home: Path
    project: Path
    refused: list[tuple[str, str | None]]

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.page.port, timeout=10)
        sent = {"Host": f"localhost:{self.page.port}", **(headers or {})}
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        out = (reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read())
        conn.close()
        return out

    def login(self) -> str:
        url = urlsplit(self.page.login_url)
        assert url.netloc == f"localhost:{self.page.port}"  # WebAuthn needs a host name
        status, headers, _ = self.request("GET", f"{url.path}?{url.query}")
        assert status == 303, status
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        return cookie.split(";")[0]

    def pending(self, cookie: str) -> dict[str, Any]:
        status, _, data = self.request("GET", "/api/pending", headers={"Cookie": cookie})
        assert status == 200
        reply: dict[str, Any] = json.loads(data)
        return reply

    def ask(self, call_id: str = "c1") -> dict[str, Any]:
        params = {"toolName": "bash", "input": {"command": "rm -rf build"},
                  "cwd": str(self.project), "toolCallId": call_id}  # fmt: skip
        approval: dict[str, Any] = result(self.sidecar, "evaluate", params)["approval"]
        return approval

    def answer(self, cookie: str, csrf: str, body: dict[str, Any], **headers: str) -> Any:
        sent = {"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": self.page.origin,
                **headers}  # fmt: skip
        status, _, data = self.request("POST", "/api/answer", body=body, headers=sent)
        return status, json.loads(data)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Page]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    sidecar = Sidecar(home)
    refused: list[tuple[str, str | None]] = []
    page = ApprovalPage(home, on_refused=lambda why, ident: refused.append((why, ident)))
    page.start()
    yield Page(page, sidecar, home, project, refused)
    page.close()
    sidecar.close()


def test_log_in_once_list_and_answer_yes(served: Page) -> None:
    approval = served.ask()
    cookie = served.login()
    data = served.pending(cookie)
    (item,) = data["pending"]
    assert (item["id"], item["digest"]) == (approval["id"], approval["digest"])
    body = {"sidecar": item["sidecar"], "id": item["id"], "digest": item["digest"],
            "decision": "yes"}  # fmt: skip
    assert served.answer(cookie, data["csrf"], body) == (200, {"outcome": "accepted"})
    asked = served.sidecar.session.desk.broker.result(approval["id"])
    assert asked is not None and asked.answer is not None and asked.answer.approver == "web"
    # Replayed: the first answer stands.
    assert served.answer(cookie, data["csrf"], body)[1] == {"outcome": "already-answered"}


def test_every_reply_carries_the_strict_headers_and_no_cors(served: Page) -> None:
    for path in ("/", "/app.js", "/api/pending", "/nowhere"):
        _, headers, _ = served.request("GET", path, headers={"Origin": "http://evil.example"})
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert not any(h.startswith("access-control-") for h in headers)


def test_without_a_session_nothing_is_listed_or_answered(served: Page) -> None:
    served.ask()
    assert served.request("GET", "/api/pending")[0] == 401
    status, _ = served.answer("pog_session=guessed", "x", {"id": "apr_" + "a" * 20})
    assert status == 401
    assert [why for why, _ in served.refused] == ["no-session", "no-session"]


def test_a_used_or_guessed_token_is_refused_and_logins_lock(served: Page) -> None:
    url = urlsplit(served.page.login_url)
    assert served.request("GET", f"/login?{url.query}")[0] == 303
    assert served.request("GET", f"/login?{url.query}")[0] == 403  # one time
    for _ in range(MAX_FAILED_LOGINS):
        assert served.request("GET", "/login?token=guess")[0] == 403
    fresh = urlsplit(served.page.login_url)  # the operator asks for a new one: it works
    assert served.request("GET", f"/login?{fresh.query}")[0] == 303
    reasons = [why for why, _ in served.refused]
    # The used token and three guesses; the fourth guess locks (audited as the lock-out), the
    # fifth is refused as locked.
    assert reasons == ["bad-login"] * (MAX_FAILED_LOGINS - 1) + ["login-locked-out", "login-locked"]


def test_a_rebinding_host_is_refused(served: Page) -> None:
    for host in ("evil.example", f"evil.example:{served.page.port}", "127.0.0.1:1"):
        status, _, _ = served.request("GET", "/", headers={"Host": host})
        assert status == 421
    assert [why for why, _ in served.refused] == ["bad-host"] * 3


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"Origin": "http://evil.example"}, "bad-origin"),
        ({"Origin": "null"}, "bad-origin"),
        ({"X-CSRF-Token": "wrong"}, "bad-csrf"),
        ({"X-CSRF-Token": ""}, "bad-csrf"),
    ],
)
def test_a_cross_site_or_forged_post_is_refused(
    served: Page, headers: dict[str, str], why: str
) -> None:
    approval = served.ask()
    cookie = served.login()
    data = served.pending(cookie)
    (item,) = data["pending"]
    body = {"sidecar": item["sidecar"], "id": item["id"], "digest": item["digest"],
            "decision": "yes"}  # fmt: skip
    status, reply = served.answer(cookie, data["csrf"], body, **headers)
    assert status == 403 and reply == {"error": why}
    assert served.sidecar.session.desk.broker.state(approval["id"]) == "open"
    assert why in [w for w, _ in served.refused]


def test_an_origin_missing_is_refused(served: Page) -> None:
    served.ask()
    cookie = served.login()
    data = served.pending(cookie)
    status, _, _ = served.request("POST", "/api/answer", body={},
                                  headers={"Cookie": cookie, "X-CSRF-Token": data["csrf"]})  # fmt: skip
    assert status == 403


@pytest.mark.parametrize("change", ["id", "digest", "sidecar"])
def test_an_answer_for_another_question_or_digest_is_refused_and_audited(
    served: Page, change: str
) -> None:
    approval = served.ask()
    cookie = served.login()
    data = served.pending(cookie)
    (item,) = data["pending"]
    body = {"sidecar": item["sidecar"], "id": item["id"], "digest": item["digest"],
            "decision": "yes"}  # fmt: skip
    body[change] = {"id": "apr_" + "Z" * 20, "digest": "sha256:" + "e" * 64,
                    "sidecar": "s1-other"}[change]  # fmt: skip
    _, reply = served.answer(cookie, data["csrf"], body)
    who, why = {"id": ("sidecar", "unknown-id"), "digest": ("sidecar", "stale"),
                "sidecar": ("page", "unknown-id")}[change]  # fmt: skip
    assert reply == {"outcome": why}
    assert served.sidecar.session.desk.broker.state(approval["id"]) == "open"
    served.sidecar.session.desk.audit_refused()  # what the listener refused, on this thread
    audited = [(r.data["reason"], r.data["approver"]) for r in read_records(served.home / "audit.jsonl")
               if r.event == "approval.refused"]  # fmt: skip
    if who == "sidecar":
        assert audited == [(why, "web")]
    else:
        assert served.refused == [(why, "apr_" + "Z" * 20)] or served.refused == [(why, item["id"])]
