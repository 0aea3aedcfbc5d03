"""The operator's signature on evidence, attacked as a host that stole the guard's key would:
every refusal has its own reason, and nothing the guard's key alone can sign passes.

Each forged envelope here is re-signed with the guard's real key after the change, so the
guard's Ed25519 signature verifies and only the operator's signature stands in the way.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from audit.verify import build_report, read_records
from audit.wire import b64url_encode, utc_now
from guard._errors import BadInputError, KeyringError
from guard._evidence.envelope import signing_message
from guard._evidence.keys import KEYRING_FILE
from guard._facade.guard import Guard
from guard._operator import (
    STATEMENT_FIELDS,
    OperatorSignature,
    approval_statement,
    check_operator_signature,
    enrolled_credential,
)
from tests.softauthn import ORIGIN, RP_ID, SoftAuthenticator

CALL = ("bash", {"command": "rm -rf build"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def guard(tmp_path: Path) -> Any:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with Guard.open(home) as opened:
        yield opened


def enrol(guard: Guard, key: SoftAuthenticator, label: str = "key") -> None:
    challenge = secrets.token_bytes(32)
    guard.operators.enroll(
        enrolled_credential(
            key.register(challenge),
            challenge=challenge,
            rp_id=key.rp_id,
            origin=key.origin,
            label=label,
            now=utc_now(),
        )
    )


def signed(guard: Guard, project: Path, key: SoftAuthenticator, call_id: str = "c1",
           **bend: Any) -> dict[str, Any]:  # fmt: skip
    """A passkey-signed envelope (as a dict) for ``CALL`` in ``project``."""
    reservation = guard.operators.reserve(*CALL, project, tool_call_id=call_id)
    assert reservation is not None
    signature = key.sign_details(reservation.statement, **bend)
    result = guard.record(*CALL, project, confirmed=True, tool_call_id=call_id,
                          origin="runtime-ui-confirm", signed=(reservation, signature))  # fmt: skip
    assert result.envelope is not None, result
    return result.envelope.model_dump(mode="json")


def resigned(guard: Guard, envelope: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``envelope`` with ``changes`` to its details, signed again with the guard's own key."""
    details = {**envelope["details"], **changes}
    details = {k: v for k, v in details.items() if v is not None}
    signature = guard.core.signer().sign(signing_message(details))
    return {**envelope, "details": {**details, "signature": b64url_encode(signature)}}


def consume(guard: Guard, project: Path, envelope: Any, call_id: str = "c1", **kw: Any) -> Any:
    return guard.consume(envelope, *CALL, project, tool_call_id=call_id, **kw)


def test_a_passkey_signed_envelope_is_consumed_and_says_so(guard: Guard, project: Path) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    envelope = signed(guard, project, key)
    result = consume(guard, project, envelope, require_operator_signature=True)
    assert (result.decision, result.operator_signature) == ("consumed", "verified")
    assert consume(guard, project, envelope).reasons == ("replay",)


def test_the_ed25519_alternative_verifies_too(guard: Guard, project: Path) -> None:
    key = SoftAuthenticator(algorithm=-8)
    enrol(guard, key)
    assert consume(guard, project, signed(guard, project, key)).operator_signature == "verified"


BENT = {
    "operator-not-verified": {"flags": 0x01},
    "operator-not-present": {"flags": 0x04},
    "operator-wrong-origin": {"origin": "http://localhost:9"},
    "operator-wrong-rp-id": {"rp_id": "evil.example"},
    "operator-wrong-type": {"kind": "webauthn.create"},
}


@pytest.mark.parametrize("reason", sorted(BENT))
def test_an_assertion_bent_by_a_stolen_guard_key_is_refused(
    guard: Guard, project: Path, reason: str
) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    good = signed(guard, project, key)
    bent = key.sign_details(good["details"], **BENT[reason]).model_dump(mode="json")
    forged = resigned(guard, good, operatorSignature=bent)
    result = consume(guard, project, forged)
    assert (result.decision, result.match.decision, result.reasons) == (
        "rejected", "untrusted", (reason,))  # fmt: skip
    assert consume(guard, project, good).decision == "consumed"  # the forgery spent nothing


def test_a_signature_by_another_key_under_the_enrolled_id_is_refused(
    guard: Guard, project: Path
) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    good = signed(guard, project, key)
    impostor = SoftAuthenticator()
    impostor.credential_id = key.credential_id
    forged = resigned(guard, good, operatorSignature=impostor.sign_details(
        good["details"]).model_dump(mode="json"))  # fmt: skip
    assert consume(guard, project, forged).reasons == ("operator-signature-invalid",)
    raw = dict(good["details"]["operatorSignature"])
    raw["signature"] = b64url_encode(b"\x30\x06\x02\x01\x01\x02\x01\x01")  # DER, wrong value
    assert consume(guard, project, resigned(guard, good, operatorSignature=raw)).reasons == (
        "operator-signature-invalid",)  # fmt: skip


def test_an_assertion_moved_to_another_envelope_is_refused(guard: Guard, project: Path) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    first = signed(guard, project, key, "c1")
    second = signed(guard, project, key, "c2")
    # The stolen key re-signs c2's envelope with c1's assertion: the challenge is c1's.
    moved = resigned(guard, second, operatorSignature=first["details"]["operatorSignature"])
    assert consume(guard, project, moved, "c2").reasons == ("operator-challenge-mismatch",)
    # And a brand-new envelope for the same call, minted by the stolen key, with c1's assertion.
    minted = resigned(guard, first, evidenceId="oce_" + b64url_encode(secrets.token_bytes(16)))
    assert consume(guard, project, minted).reasons == ("operator-challenge-mismatch",)


CHANGES = {
    "evidenceId": "oce_" + "A" * 22,
    "actionKind": "protected",
    "toolName": "write",
    "path": "/elsewhere",
    "scope": "/elsewhere",
    "payloadHash": "sha256:" + "0" * 64,
    "toolCallId": "c9",
    "createdAtIso": "2026-01-01T00:00:00.000Z",
    "expiresAtIso": "2099-01-01T00:00:00.000Z",
    "keyId": "ed25519:" + "0" * 64,
}


def test_every_field_of_the_statement_is_bound() -> None:
    assert set(CHANGES) == set(STATEMENT_FIELDS)


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_changing_any_statement_field_breaks_the_operators_signature(
    guard: Guard, project: Path, field: str
) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    good = signed(guard, project, key)
    details = {**good["details"], field: CHANGES[field]}
    assert approval_statement(details) != approval_statement(good["details"])
    operators = guard.public_keyring().operators
    assertion = OperatorSignature.model_validate(good["details"]["operatorSignature"])
    assert check_operator_signature(good["details"], assertion, operators).reason is None
    assert check_operator_signature(details, assertion, operators).reason == (
        "operator-challenge-mismatch")  # fmt: skip
    if field in ("evidenceId", "createdAtIso", "path", "toolCallId"):
        # End to end as well, where the rest of the checks would let the envelope through.
        forged = resigned(guard, good, **{field: CHANGES[field]})
        result = consume(guard, project, forged, CHANGES["toolCallId"] if field == "toolCallId"
                         else "c1")  # fmt: skip
        assert result.decision == "rejected"
        assert result.reasons in (("operator-challenge-mismatch",), ("created-in-future",),
                                  ("ttl-out-of-range",))  # fmt: skip


def test_unknown_and_removed_credentials_are_refused_by_name(guard: Guard, project: Path) -> None:
    key, other = SoftAuthenticator(), SoftAuthenticator()
    enrol(guard, key)
    good = signed(guard, project, key, "c1")
    stranger = resigned(guard, good, operatorSignature=other.sign_details(
        good["details"]).model_dump(mode="json"))  # fmt: skip
    assert consume(guard, project, stranger).reasons == ("operator-unknown-credential",)
    guard.operators.remove(key.id)
    assert consume(guard, project, good).reasons == ("operator-credential-removed",)
    with pytest.raises(BadInputError):
        guard.operators.remove(key.id)
    data = [r.data for r in read_records(guard.audit.path) if r.event.startswith("operator.")]
    assert [d["credentialId"] for d in data] == [key.id, key.id]


def test_a_sign_count_going_back_is_refused(guard: Guard, project: Path) -> None:
    key = SoftAuthenticator()
    key.counter = 5  # enrolled with count 5
    enrol(guard, key)
    with pytest.raises(AssertionError, match="operator-sign-count"):
        signed(guard, project, key, "c1", counter=3)  # the guard itself mints nothing
    good = signed(guard, project, key, "c1")
    low = resigned(guard, good, operatorSignature=key.sign_details(
        good["details"], counter=3).model_dump(mode="json"))  # fmt: skip
    assert consume(guard, project, low).reasons == ("operator-sign-count",)
    # Above the enrolment, but not above what this ledger has seen: a cloned authenticator.
    ahead = signed(guard, project, key, "c2", counter=10)
    behind = signed(guard, project, key, "c3", counter=8)
    assert consume(guard, project, ahead, "c2").decision == "consumed"
    result = consume(guard, project, behind, "c3")
    assert (result.decision, result.reasons) == ("rejected", ("operator-sign-count",))
    assert consume(guard, project, behind, "c3").reasons == ("replay",)  # and it is spent


def test_a_guard_without_that_keyring_trusts_no_operator(guard: Guard, project: Path) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    keyring = guard.home / KEYRING_FILE
    text = keyring.read_text()
    # A credential written into the keyring by hand (without the guard's re-signing).
    keyring.write_text(text.replace(key.id, SoftAuthenticator().id))
    with pytest.raises(KeyringError):
        Guard.open(guard.home).close()
    keyring.write_text(text)
    guard.rotate_key()  # rotation keeps the operators
    assert [c.credential_id for c in guard.operators.listed()] == [key.id]


def test_the_users_policy_requires_the_signature_and_the_report_says_why(
    guard: Guard, project: Path
) -> None:
    (guard.home / "operator-guard.toml").write_text(
        "[evidence]\nrequire_operator_signature = true\n"
    )
    plain = guard.record(*CALL, project, confirmed=True, tool_call_id="c1",
                         origin="runtime-ui-confirm", approver="pi-dialog")  # fmt: skip
    assert plain.operator_signature == "none"
    assert plain.envelope is not None
    result = consume(guard, project, plain.envelope.model_dump(mode="json"))
    assert (result.decision, result.match.decision, result.reasons) == (
        "rejected", "not-operator-signed", ("no-operator-signature",))  # fmt: skip
    guard.audit.append(
        "tool.executed",
        {"toolCallId": "c1", "toolName": "bash", "isError": False, "actionKind": "destructive",
         **{k: v for k, v in plain.envelope.details.fingerprint().model_dump(
             mode="json", exclude_none=True).items() if k not in ("actionKind", "toolName")}},
    )  # fmt: skip
    report = build_report(read_records(guard.audit.path))
    assert report.summary.rejected_by_reason == {"no-operator-signature": 1}
    (row,) = report.rows
    assert (row.consumption, row.rejected) == ("not-consumed", ("no-operator-signature",))


def test_a_project_file_cannot_switch_the_requirement(tmp_path: Path, guard: Guard,
                                                      project: Path) -> None:  # fmt: skip
    (project / ".pi").mkdir()
    (project / ".pi" / "operator-guard.toml").write_text(
        "[evidence]\nrequire_operator_signature = true\n"
    )
    policy = guard.classifier.policy_for(project)
    assert policy.evidence.require_operator_signature is False
    assert any("[evidence] is read from the user's file only" in p.message
               for p in policy.problems)  # fmt: skip
    assert RP_ID == "localhost" and ORIGIN.startswith("http://localhost:")


@pytest.mark.parametrize("public_key", ["AB", b64url_encode(b"\x82\x01\x02"), "A" * 40])
def test_an_unusable_enrolled_key_refuses_its_signatures_rather_than_crash(
    guard: Guard, project: Path, public_key: str
) -> None:
    key = SoftAuthenticator()
    enrol(guard, key)
    good = signed(guard, project, key)
    (credential,) = guard.operators.listed()
    broken = {key.id: credential.model_copy(update={"public_key": public_key})}
    assertion = OperatorSignature.model_validate(good["details"]["operatorSignature"])
    check = check_operator_signature(good["details"], assertion, broken)
    assert check.reason == "operator-signature-invalid"


@pytest.mark.parametrize(
    "table",
    [
        '[evidence]\nrequire_operator_signature = "yes"\n',
        "[evidence]\nrequire_operator_signatures = false\n",
        "evidence = 1\n",
    ],
)
def test_an_evidence_table_that_does_not_validate_requires_the_signature(
    guard: Guard, project: Path, table: str
) -> None:
    (guard.home / "operator-guard.toml").write_text(table)
    policy = guard.classifier.policy_for(project)
    assert policy.evidence.require_operator_signature is True
    assert any("operator's signature" in p.message for p in policy.problems)
