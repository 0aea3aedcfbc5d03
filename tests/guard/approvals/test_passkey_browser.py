"""The operator's passkey on the real page, in headless chromium with its virtual authenticator
(the DevTools protocol's WebAuthn domain): enrolled through ``pi-guard operator enroll``
(the credential lands in the keyring), then a Yes signed with it (the sidecar checks the
assertion and signs it into the evidence); an authenticator without user verification
enrols nothing and signs nothing. Over plain HTTP: the enrolment and statement endpoints
keep every check of the page (Host, session, Origin, CSRF), one ceremony per login."""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import CDPSession, Page, expect

from audit.wire import b64url_encode
from guard._approvals.web import ApprovalPage, Enrolment
from guard._evidence.keys import KEYRING_FILE, PublicKeyring
from guard._operator import OperatorCredential, OperatorSignature, check_operator_signature
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import result
from tests.softauthn import SoftAuthenticator

pytestmark = pytest.mark.integration

# -- the world: a home, a sidecar asking, the operator's CLI and page ------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Enrolling:
    """``pi-guard operator enroll`` running on ``port``; ``login`` is what it printed."""

    def __init__(self, home: Path, port: int, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PI_OPERATOR_GUARD_DEBUG"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "guard", "--home", str(home), "operator", "enroll",
             "--port", str(port), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert self.proc.stderr is not None
        self.head = [self.proc.stderr.readline() for _ in range(2)]
        self.login = self.head[1].rsplit(" ", 1)[1].strip()

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, "".join(self.head) + err


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir(mode=0o700)
        self.project = tmp_path / "project"
        (self.project / "build").mkdir(parents=True)
        self.sidecar = Sidecar(self.home)
        self.port = free_port()
        self.pages: list[ApprovalPage] = []
        self.enrolling: list[Enrolling] = []

    def enrol(self, *args: str) -> Enrolling:
        started = Enrolling(self.home, self.port, *args)
        self.enrolling.append(started)
        return started

    def operators(self) -> dict[str, OperatorCredential]:
        return PublicKeyring.load(self.home / KEYRING_FILE).operators

    def approval_page(self, port: int | None = None) -> ApprovalPage:
        page = ApprovalPage(self.home, port=self.port if port is None else port)
        page.start()
        self.pages.append(page)
        return page

    def call(self, command: str, call_id: str) -> dict[str, Any]:
        return {"toolName": "bash", "input": {"command": command}, "cwd": str(self.project),
                "toolCallId": call_id}  # fmt: skip

    def ask(self, command: str = "rm -rf build", call_id: str = "c1") -> dict[str, Any]:
        approval: dict[str, Any] = result(self.sidecar, "evaluate", self.call(command, call_id))[
            "approval"
        ]
        return approval

    def asked(self, approval: dict[str, Any]) -> dict[str, Any]:
        """The question as the broker holds it: open, or the answer that won."""
        asked = self.sidecar.session.desk.broker.result(approval["id"])
        assert asked is not None
        answer = asked.answer.model_dump(mode="json") if asked.answer is not None else None
        return {"open": asked.answer is None and asked.withdrawn is None, "answer": answer}

    def close(self) -> None:
        for page in self.pages:
            page.close()
        for started in self.enrolling:
            if started.proc.poll() is None:
                started.proc.kill()
                started.proc.communicate()
        self.sidecar.close()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(tmp_path)
    yield made
    made.close()


@dataclass
class Authenticator:
    """Chromium's virtual authenticator attached to the test's page."""

    cdp: CDPSession
    id: str

    def credentials(self) -> list[str]:
        """The ids of the credentials it holds, base64url as the keyring spells them."""
        held = self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.id})
        return [b64url_encode(base64.b64decode(c["credentialId"])) for c in held["credentials"]]

    def verifies_user(self, verified: bool) -> None:
        self.cdp.send("WebAuthn.setUserVerified",
                      {"authenticatorId": self.id, "isUserVerified": verified})  # fmt: skip


def virtual_authenticator(page: Page, *, verified: bool = True) -> Authenticator:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {"options": {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                     "hasUserVerification": True, "isUserVerified": verified}},
    )  # fmt: skip
    return Authenticator(cdp, added["authenticatorId"])


def enrol_on_the_page(world: World, page: Page, label: str = "laptop") -> OperatorCredential:
    """Enrol the page's virtual authenticator through the CLI; the credential it printed."""
    enrolling = world.enrol("--label", label)
    page.goto(enrolling.login)
    expect(page.locator("#state")).to_contain_text("ready")
    page.locator("#enrol").click()
    expect(page.locator("#state")).to_contain_text(f"enrolled: {label}")
    code, out, err = enrolling.finish()
    assert code == 0, err
    return OperatorCredential.model_validate_json(out)


def question(page: Page, approval: dict[str, Any]) -> Any:
    return page.locator(f'li.question[data-id="{approval["id"]}"]')


# -- in the browser --------------------------------------------------------------------------


def test_enrol_through_the_page(world: World, page: Page) -> None:
    authenticator = virtual_authenticator(page)
    credential = enrol_on_the_page(world, page)
    assert page.url.startswith(f"http://localhost:{world.port}/")
    assert authenticator.credentials() == [credential.credential_id]
    (kept,) = world.operators().values()
    assert kept == credential
    assert (kept.origin, kept.rp_id, kept.status) == (f"http://localhost:{world.port}",
                                                      "localhost", "active")  # fmt: skip
    assert kept.algorithm in (-7, -8, -257)


def test_enrolment_without_user_verification_is_refused(world: World, page: Page) -> None:
    authenticator = virtual_authenticator(page, verified=False)
    enrolling = world.enrol("--timeout", "5")
    page.goto(enrolling.login)
    expect(page.locator("#state")).to_contain_text("ready")
    page.locator("#enrol").click()
    expect(page.locator("#state")).to_contain_text("passkey refused or failed")
    expect(page.locator("#state")).to_contain_text("nothing was enrolled")
    code, out, _ = enrolling.finish()
    assert (code, out) == (3, "")  # nothing enrolled before the timeout
    assert world.operators() == {}
    assert authenticator.credentials() == []


def test_a_yes_signed_with_the_passkey(world: World, page: Page) -> None:
    virtual_authenticator(page)
    credential = enrol_on_the_page(world, page)
    approval = world.ask()
    approvals = world.approval_page()
    page.goto(approvals.login_url)
    expect(page.locator("#operator")).to_contain_text("signed with your passkey")
    item = question(page, approval)
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    answer = world.asked(approval)["answer"]
    assert (answer["decision"], answer["approver"]) == ("yes", "web")
    assert answer["operatorCredential"] == credential.credential_id
    # The record signs the checked assertion into the evidence: it verifies on its own.
    recorded = result(world.sidecar, "record",
                      {**world.call("rm -rf build", "c1"), "confirmed": True,
                       "approvalId": approval["id"]})  # fmt: skip
    details = recorded["envelope"]["details"]
    signature = OperatorSignature.model_validate(details["operatorSignature"])
    assert signature.credential_id == credential.credential_id
    checked = check_operator_signature(details, signature, world.operators())
    assert checked.verified, checked.reason


def test_a_grant_button_is_signed_too(world: World, page: Page) -> None:
    for name in ("a.txt", "b.txt"):
        (world.project / name).write_text(name)
    result(world.sidecar, "sandbox.plan", {"cwd": str(world.project), "sessionId": "s1",
                                           "mode": "tui"})  # fmt: skip
    virtual_authenticator(page)
    credential = enrol_on_the_page(world, page)
    approval = world.ask("rm -f a.txt", "c1")
    page.goto(world.approval_page().login_url)
    item = question(page, approval)
    item.locator("button.grant").nth(1).click()
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    answer = world.asked(approval)["answer"]
    assert (answer["grant"], answer["operatorCredential"]) == (1, credential.credential_id)


def test_without_user_verification_nothing_is_answered(world: World, page: Page) -> None:
    authenticator = virtual_authenticator(page)
    enrol_on_the_page(world, page)
    authenticator.verifies_user(False)
    approval = world.ask()
    page.goto(world.approval_page().login_url)
    item = question(page, approval)
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_contain_text("passkey refused or failed")
    expect(item.locator(".outcome")).to_contain_text("nothing was answered")
    assert world.asked(approval)["open"] is True
    # No stays possible (never signed), and is the answer.
    expect(item.locator(".no")).to_be_enabled()
    item.locator(".no").click()
    expect(item.locator(".outcome")).to_have_text("answered: no")
    answer = world.asked(approval)["answer"]
    assert (answer["decision"], answer.get("operatorCredential")) == ("no", None)


def test_a_forged_assertion_is_refused_by_the_sidecar(world: World, page: Page) -> None:
    """The page only relays: an assertion changed on the way (here its signature) is refused
    with the sidecar's reason and the question stays open; the real one then counts."""
    virtual_authenticator(page)
    credential = enrol_on_the_page(world, page)
    approval = world.ask()
    page.goto(world.approval_page().login_url)
    item = question(page, approval)

    def tamper(route: Any) -> None:
        body = json.loads(route.request.post_data or "{}")
        signature = body["operatorSignature"]["signature"]
        body["operatorSignature"]["signature"] = ("A" if signature[0] != "A" else "B") + signature[
            1:
        ]
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/answer", tamper)
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_have_text("not accepted: operator-signature-invalid")
    assert world.asked(approval)["open"] is True
    page.unroute("**/api/answer")
    expect(item.locator(".yes")).to_be_enabled()
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    assert world.asked(approval)["answer"]["operatorCredential"] == credential.credential_id


def test_a_page_on_another_port_is_not_signed(world: World, page: Page) -> None:
    """The passkey's origin is its page's: a page elsewhere lists no credential, and its Yes
    is the plain answer it always was (a consumer may require a signature)."""
    virtual_authenticator(page)
    enrol_on_the_page(world, page)
    approval = world.ask()
    elsewhere = world.approval_page(port=0)
    page.goto(elsewhere.login_url)
    expect(page.locator("#operator")).to_contain_text("not signed with a passkey")
    # ... and it says where the passkey is, not "none enrolled: enrol" (a second enrolment).
    expect(page.locator("#operator")).to_contain_text(
        f"a passkey is enrolled for http://localhost:{world.port}; this page is on {elsewhere.port}"
    )
    expect(page.locator("#operator")).not_to_contain_text("none enrolled")
    item = question(page, approval)
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    assert world.asked(approval)["answer"].get("operatorCredential") is None


# -- over HTTP: the same checks on the new endpoints -----------------------------------------


class Client:
    """A plain HTTP client for one page (the agent on the same machine, or the operator)."""

    def __init__(self, page: ApprovalPage) -> None:
        self.page = page
        self.cookie = ""
        self.csrf = ""

    def request(
        self, method: str, path: str, body: Any = None, **headers: str
    ) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.page.port, timeout=10)
        sent = {"Host": f"localhost:{self.page.port}", "Cookie": self.cookie, **headers}
        data = None if body is None else json.dumps(body)
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        if reply.status == 303:
            self.cookie = str(reply.getheader("Set-Cookie")).split(";")[0]
        raw = reply.read()
        conn.close()
        return reply.status, json.loads(raw) if raw else {}

    def login(self) -> None:
        url = urlsplit(self.page.login_url)
        assert self.request("GET", f"{url.path}?{url.query}")[0] == 303

    def post(self, path: str, body: Any, **headers: str) -> tuple[int, dict[str, Any]]:
        sent = {"Origin": self.page.origin, "X-CSRF-Token": self.csrf, **headers}
        return self.request("POST", path, body, **sent)


@pytest.fixture
def enrolment(tmp_path: Path) -> Iterator[tuple[ApprovalPage, Enrolment, list[str]]]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    refused: list[str] = []
    done = Enrolment("laptop", keep=lambda credential: credential)
    page = ApprovalPage(home, enrol=done, on_refused=lambda why, _id: refused.append(why))
    page.start()
    yield page, done, refused
    page.close()


def test_enrolment_serves_only_the_ceremony(
    enrolment: tuple[ApprovalPage, Enrolment, list[str]],
) -> None:
    page, done, refused = enrolment
    client = Client(page)
    assert client.request("GET", "/api/enrol")[0] == 401  # no session
    client.login()
    assert client.request("GET", "/api/pending")[0] == 404
    assert client.post("/api/answer", {})[0] == 404
    assert client.post("/api/statement", {})[0] == 404
    status, given = client.request("GET", "/api/enrol")
    assert status == 200 and given["origin"] == page.origin
    client.csrf = given["csrf"]
    authenticator = SoftAuthenticator(origin=page.origin)
    challenge = base64.urlsafe_b64decode(given["options"]["challenge"] + "=")
    answer = authenticator.register(challenge)
    assert client.post("/api/enrol", answer, Origin="http://evil.example")[0] == 403
    assert client.post("/api/enrol", answer, **{"X-CSRF-Token": "forged"})[0] == 403
    assert client.request("POST", "/api/enrol", answer, Host="evil.example")[0] == 421
    assert refused == ["no-session", "bad-origin", "bad-csrf", "bad-host"]
    assert done.wait(0) is None  # none of those was a ceremony
    status, said = client.post("/api/enrol", answer)
    assert (status, said["outcome"]) == (200, "enrolled")
    assert done.wait(1) is not None
    # One ceremony per login: the challenge is used up, no new one is given.
    assert client.post("/api/enrol", answer) == (409, {"error": "no-ceremony"})
    assert client.request("GET", "/api/enrol")[0] == 409


def test_an_old_challenge_is_refused(
    enrolment: tuple[ApprovalPage, Enrolment, list[str]],
) -> None:
    """Each GET gives a fresh challenge; an answer over an earlier one does not verify."""
    page, done, _ = enrolment
    client = Client(page)
    client.login()
    first = client.request("GET", "/api/enrol")[1]
    client.csrf = client.request("GET", "/api/enrol")[1]["csrf"]
    old = base64.urlsafe_b64decode(first["options"]["challenge"] + "=")
    status, said = client.post("/api/enrol", SoftAuthenticator(origin=page.origin).register(old))
    assert status == 200 and said["outcome"] == "refused"
    with pytest.raises(Exception, match="did not verify"):
        done.wait(1)


def test_the_statement_keeps_the_page_checks(world: World) -> None:
    approval = world.ask()
    page = world.approval_page()
    client = Client(page)
    assert client.post("/api/statement", {})[0] == 401
    client.login()
    listing = client.request("GET", "/api/pending")[1]
    assert listing["operator"] is None  # nothing enrolled
    client.csrf = listing["csrf"]
    (item,) = listing["pending"]
    body = {"sidecar": item["sidecar"], "id": approval["id"], "digest": approval["digest"]}
    assert client.post("/api/statement", body, Origin="http://evil.example")[0] == 403
    assert client.post("/api/statement", body, **{"X-CSRF-Token": ""})[0] == 403
    assert client.post("/api/statement", {**body, "sidecar": "s1-other"}) == (
        200, {"outcome": "unknown-id"})  # fmt: skip
    assert client.post("/api/statement", {**body, "id": "x"})[1] == {"error": "invalid id"}
    assert client.post("/api/statement", body) == (200, {"outcome": "no-operator"})
    assert world.asked(approval)["open"] is True
