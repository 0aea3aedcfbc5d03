"""A passkey yes through the sidecar: the page asks for the call's statement, the operator's
authenticator signs it, the sidecar checks the signature before the answer counts, and the
evidence it mints carries the signature that every consumer checks again."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.wire import b64url_encode, utc_now
from guard._approvals import ask_local
from guard._facade.guard import Guard
from guard._operator import enrolled_credential
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import records, result
from tests.softauthn import ORIGIN, RP_ID, SoftAuthenticator


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return home


def enrol(home: Path) -> SoftAuthenticator:
    key = SoftAuthenticator()
    challenge = secrets.token_bytes(32)
    credential = enrolled_credential(
        key.register(challenge), challenge=challenge, rp_id=RP_ID, origin=ORIGIN,
        label="test key", now=utc_now(),
    )  # fmt: skip
    with Guard.open(home) as guard:
        guard.operators.enroll(credential)
    return key


@pytest.fixture
def key(home: Path) -> SoftAuthenticator:
    return enrol(home)


@pytest.fixture
def server(home: Path, key: SoftAuthenticator) -> Iterator[Sidecar]:
    sidecar = Sidecar(home)
    yield sidecar
    sidecar.close()


def rm(project: Path, call_id: str = "c1") -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(project),
            "toolCallId": call_id}  # fmt: skip


def local(server: Sidecar, request: dict[str, Any]) -> dict[str, Any]:
    return ask_local(server.session.session_dir, request)


def statement(server: Sidecar, approval: dict[str, Any]) -> dict[str, Any]:
    reply = local(server, {"op": "statement", "id": approval["id"], "digest": approval["digest"]})
    assert reply["outcome"] == "ready", reply
    return reply


def signed_answer(
    approval: dict[str, Any], ready: dict[str, Any], key: SoftAuthenticator, **bend: Any
) -> dict[str, Any]:
    signature = key.sign_details(ready["statement"], **bend)
    return {"op": "answer", "approver": "web", "id": approval["id"], "digest": approval["digest"],
            "decision": "yes", "evidenceId": ready["evidenceId"],
            "operatorSignature": signature.model_dump(mode="json")}  # fmt: skip


def test_a_passkey_yes_mints_evidence_that_carries_the_operators_signature(
    server: Sidecar, project: Path, key: SoftAuthenticator
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    ready = statement(server, approval)
    assert ready["allowCredentials"] == [key.id] and ready["rpId"] == "localhost"
    assert ready["statement"]["toolCallId"] == "c1"
    assert local(server, signed_answer(approval, ready, key)) == {"outcome": "accepted"}
    recorded = result(server, "record", {**rm(project), "confirmed": True,
                                         "approvalId": approval["id"]})  # fmt: skip
    assert recorded["decision"] == "recorded" and recorded["operatorSignature"] == "verified"
    details = recorded["envelope"]["details"]
    assert details["evidenceId"] == ready["evidenceId"]
    assert details["operatorSignature"]["credentialId"] == key.id
    assert records(server.home, "confirmation.recorded")[0]["operatorCredential"] == key.id
    consumed = result(server, "consume", {**rm(project), "envelope": recorded["envelope"],
                                          "requireOperatorSignature": True})  # fmt: skip
    assert consumed["decision"] == "consumed" and consumed["operatorSignature"] == "verified"


def test_the_pi_dialog_alone_is_refused_where_the_operators_signature_is_required(
    server: Sidecar, project: Path
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    yes = {"id": approval["id"], "digest": approval["digest"], "decision": "yes"}
    assert result(server, "approvals.answer", yes)["outcome"] == "accepted"
    recorded = result(server, "record", {**rm(project), "confirmed": True,
                                         "approvalId": approval["id"]})  # fmt: skip
    assert recorded["operatorSignature"] == "none"
    assert "operatorSignature" not in recorded["envelope"]["details"]
    refused = result(server, "consume", {**rm(project), "envelope": recorded["envelope"],
                                         "requireOperatorSignature": True})  # fmt: skip
    assert (refused["decision"], refused["match"]["decision"], refused["reasons"]) == (
        "rejected", "not-operator-signed", ["no-operator-signature"])  # fmt: skip
    # Not consumed: a consumer that does not require the signature still can.
    consumed = result(server, "consume", {**rm(project), "envelope": recorded["envelope"]})
    assert consumed["decision"] == "consumed" and consumed["operatorSignature"] == "none"
    (rejected,) = records(server.home, "evidence.rejected")
    assert rejected["decision"] == "not-operator-signed"


BENT = {
    "operator-not-verified": {"flags": 0x01},
    "operator-not-present": {"flags": 0x04},
    "operator-wrong-origin": {"origin": "http://localhost:1"},
    "operator-wrong-rp-id": {"rp_id": "example.org"},
    "operator-wrong-type": {"kind": "webauthn.create"},
}


@pytest.mark.parametrize("reason", sorted(BENT))
def test_a_bent_assertion_is_refused_with_its_reason_and_audited(
    server: Sidecar, project: Path, key: SoftAuthenticator, reason: str
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    ready = statement(server, approval)
    assert local(server, signed_answer(approval, ready, key, **BENT[reason])) == {"outcome": reason}
    assert server.session.desk.broker.state(approval["id"]) == "open"
    server.session.desk.audit_refused()  # what the port refused, on this thread
    assert [r["reason"] for r in records(server.home, "approval.refused")] == [reason]


def test_another_authenticator_or_another_statement_is_refused(
    server: Sidecar, project: Path, key: SoftAuthenticator
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    ready = statement(server, approval)
    impostor = SoftAuthenticator()
    impostor.credential_id = key.credential_id  # claims the enrolled id, has another key
    reply = local(server, signed_answer(approval, ready, impostor))
    assert reply == {"outcome": "operator-signature-invalid"}
    stranger = SoftAuthenticator()
    assert local(server, signed_answer(approval, ready, stranger)) == {
        "outcome": "operator-unknown-credential"}  # fmt: skip
    # A statement for another question (c2), signed by the real key, cannot answer this one.
    other = result(server, "evaluate", rm(project, "c2"))["approval"]
    other_ready = statement(server, other)
    moved = signed_answer(approval, other_ready, key)
    assert local(server, moved) == {"outcome": "no-operator"}  # not a statement of this question
    moved = {**signed_answer(approval, other_ready, key), "evidenceId": ready["evidenceId"]}
    assert local(server, moved) == {"outcome": "operator-challenge-mismatch"}
    assert server.session.desk.broker.state(approval["id"]) == "open"


def test_a_removed_credential_no_longer_signs(
    server: Sidecar, home: Path, project: Path, key: SoftAuthenticator
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    ready = statement(server, approval)
    assert local(server, signed_answer(approval, ready, key)) == {"outcome": "accepted"}
    with Guard.open(home) as guard:
        guard.operators.remove(key.id)
    # Removed between the answer and the record: the guard checks again and mints nothing.
    recorded = result(server, "record", {**rm(project), "confirmed": True,
                                         "approvalId": approval["id"]})  # fmt: skip
    assert (recorded["decision"], recorded["reasons"]) == (
        "invalid", ["operator-credential-removed"])  # fmt: skip
    assert records(server.home, "confirmation.recorded") == []
    # And the next question cannot be signed at all.
    approval = result(server, "evaluate", rm(project, "c2"))["approval"]
    reply = local(server, {"op": "statement", "id": approval["id"], "digest": approval["digest"]})
    assert reply == {"outcome": "no-operator"}


def test_no_statement_without_an_enrolled_authenticator(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "bare"
    home.mkdir(mode=0o700)
    sidecar = Sidecar(home)
    try:
        approval = result(sidecar, "evaluate", rm(project))["approval"]
        reply = ask_local(sidecar.session.session_dir, {"op": "statement", "id": approval["id"],
                                                 "digest": approval["digest"]})  # fmt: skip
        assert reply == {"outcome": "no-operator"}
        forged = {"op": "answer", "id": approval["id"], "digest": approval["digest"],
                  "decision": "yes", "evidenceId": "oce_" + b64url_encode(bytes(16)),
                  "operatorSignature": SoftAuthenticator().assertion(bytes(32)).model_dump(
                      mode="json")}  # fmt: skip
        assert ask_local(sidecar.session.session_dir, forged) == {"outcome": "no-operator"}
    finally:
        sidecar.close()
