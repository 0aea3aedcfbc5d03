"""The operator's passkey in the real pi (both pinned versions): enrolled with chromium's
virtual authenticator through ``pi-guard operator enroll``, it signs a Yes given on the
session's approval page (``[approvals] page = true`` on the enrolled port); under
``[evidence] require_operator_signature`` that evidence is consumed and verifies in the
TypeScript verifier too, while a Yes from pi's dialog alone is refused there."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tools.pi.harness import ensure_pi, is_guard_dialog

from .pi_world import REPO, World, confirms, result_text, tool_ends

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

LOGIN = re.compile(r"http://localhost:\d+/login\?token=[A-Za-z0-9_-]+")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def enrol(world: World, page: Page, port: int) -> str:
    """Enrol the page's virtual authenticator for ``http://localhost:<port>``; its id."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {"options": {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                     "hasUserVerification": True, "isUserVerified": True}},
    )  # fmt: skip
    enrolling = subprocess.Popen(
        [sys.executable, "-m", "guard", "--home", str(world.home), "operator", "enroll",
         "--port", str(port), "--label", "e2e laptop", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert enrolling.stderr is not None
        head = enrolling.stderr.readline() + enrolling.stderr.readline()
        login = LOGIN.search(head)
        assert login is not None, head
        page.goto(login.group(0))
        expect(page.locator("#state")).to_contain_text("ready")
        page.locator("#enrol").click()
        expect(page.locator("#state")).to_contain_text("enrolled: e2e laptop")
        out, err = enrolling.communicate(timeout=60)
    finally:
        if enrolling.poll() is None:
            enrolling.kill()
            enrolling.communicate()
    assert enrolling.returncode == 0, err
    credential_id: str = json.loads(out)["credentialId"]
    return credential_id


def on_the_page(page: Page) -> Any:
    """Answer the guard's dialog on the approval page with the passkey (pi's is left open:
    the guard closes it once the page answered)."""

    def answer(request: Mapping[str, Any]) -> None:
        if is_guard_dialog(request):
            item = page.locator("li.question")
            expect(item).to_have_count(1)
            item.locator(".yes").click()
            expect(item.locator(".outcome")).to_have_text("answered: yes")
        return None

    return answer


def verify_envelope(envelope: Mapping[str, Any], keyring: Path, tmp: Path) -> tuple[int, Any]:
    """The TypeScript verifier's answer, requiring the operator's signature."""
    node = ensure_pi(REPO, "current").node  # Node >= 22.18 runs the TypeScript as it is
    path = tmp / f"envelope-{envelope['details']['evidenceId']}.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    done = subprocess.run(
        [str(node), "src/cli.ts", "verify-envelope", str(path), "--keyring", str(keyring),
         "--tool-call-id", envelope["details"]["toolCallId"], "--require-operator-signature"],
        cwd=REPO / "verifier", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def test_a_passkey_yes_is_consumed_where_a_signature_is_required(world: World, page: Page) -> None:
    port = free_port()
    credential = enrol(world, page, port)
    (world.home / "operator-guard.toml").write_text(
        f"[approvals]\npage = true\nport = {port}\n\n[evidence]\nrequire_operator_signature = true\n"
    )
    with world.rpc() as pi:
        *_, status = pi.command("/guard")
        login = LOGIN.search(str(status["message"]))
        assert login is not None, status["message"]
        assert login.group(0).startswith(f"http://localhost:{port}/")
        page.goto(login.group(0))
        expect(page.locator("#operator")).to_contain_text("signed with your passkey")
        signed = pi.prompt("scenario:rm-build", on_the_page(page), timeout=90)
        dialog_only = pi.prompt(
            "scenario:rm-a", lambda r: True if is_guard_dialog(r) else None, timeout=90
        )
    for events in (signed, dialog_only):
        assert len(confirms(events)) == 1
        (end,) = tool_ends(events)
        assert end["isError"] is False, result_text(end)
    assert not (world.project / "build").exists() and not (world.project / "a").exists()
    approvers = [r["data"]["approver"] for r in world.audit("confirmation.recorded")]
    assert approvers == ["web", "pi-dialog"]
    by_page, by_dialog = world.envelopes()
    assert by_page["details"]["operatorSignature"]["credentialId"] == credential
    assert "operatorSignature" not in by_dialog["details"]

    # The consumer of this home requires the operator's signature ([evidence] in the policy).
    consumed = world.consume(by_page, "rm -rf build")
    assert consumed.returncode == 0, consumed.stdout + consumed.stderr
    said = json.loads(consumed.stdout)
    assert (said["decision"], said["operatorSignature"]) == ("consumed", "verified")
    refused = world.consume(by_dialog, "rm -rf a")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    said = json.loads(refused.stdout)
    assert said["decision"] == "rejected"
    assert said["match"]["decision"] == "not-operator-signed"
    assert said["reasons"] == ["no-operator-signature"]

    # The TypeScript verifier reads the same: the keyring's operators, the signature.
    keyring = world.home / "keyring.json"
    code, out = verify_envelope(by_page, keyring, world.tmp)
    assert (code, out["decision"], out["operatorSignature"]) == (0, "match", "verified"), out
    code, out = verify_envelope(by_dialog, keyring, world.tmp)
    assert (code, out["decision"]) == (3, "not-operator-signed"), out
    assert out["reasons"] == ["no-operator-signature"]
