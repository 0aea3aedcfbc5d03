"""The operator-decision statement in a DSSE envelope: known answers (tests/vectors/dsse-v1.json),
an independent verifier (securesystemslib's DSSE ``Envelope``), and the guard's refusals."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey

from audit import LogFormatError
from audit.wire import AuditRecord, canonical_json, sha256_prefixed
from guard import Guard
from guard._errors import BadInputError
from guard._evidence.dsse import pae
from guard._evidence.keys import KeyStore, Signer, key_id_for
from guard._evidence.statement import decision_from_record
from guard._home import AUDIT_LOG_FILE
from guard.evidence import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    DecisionStatement,
    DsseEnvelope,
    OperatorDecision,
    dsse_from_log,
    sign_statement,
    statement_for,
    verify_dsse,
)

VECTOR: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "dsse-v1.json").read_text()
)
SECRET = "ghp_" + "Zq7RtW2xKp9mLs4VbN8cYd3FgH6jJ1aE5uQo"


def _signer(seed_hex: str) -> Signer:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
    return Signer(private, key_id_for(private.public_key()))


def _public(signer: Signer) -> Ed25519PublicKey:
    return signer.public_key


def _sslib_verifies(envelope: dict[str, Any], public: Ed25519PublicKey) -> bool:
    key = SSlibKey.from_crypto(public, keyid=key_id_for(public))
    try:
        Envelope.from_dict(copy.deepcopy(envelope)).verify([key], 1)
    except VerificationError:
        return False
    return True


# -- known answers ------------------------------------------------------------------------------


def test_pae_is_the_dsse_spec_encoding() -> None:
    # The DSSE specification's own example (protocol.md, "Signature definition").
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae(PAYLOAD_TYPE, b"") == b"DSSEv1 28 application/vnd.in-toto+json 0 "
    assert pae("t", "é".encode()) == "DSSEv1 1 t 2 é".encode()  # lengths in bytes


def test_known_answer_statement_payload_pae_and_signature() -> None:
    signer = _signer(VECTOR["seedHex"])
    record = AuditRecord.model_validate(VECTOR["record"])
    statement = statement_for(decision_from_record(record))
    assert statement.model_dump(mode="json") == VECTOR["statement"]
    payload = canonical_json(VECTOR["statement"])
    assert payload.hex() == VECTOR["payloadHex"]
    assert pae(PAYLOAD_TYPE, payload).hex() == VECTOR["paeHex"]
    envelope = sign_statement(signer, statement).model_dump(mode="json")
    assert envelope == VECTOR["envelope"]  # Ed25519 is deterministic (RFC 8032 5.1.6)
    assert envelope["signatures"][0]["keyid"] == VECTOR["record"]["data"]["keyId"]
    stmt = VECTOR["statement"]
    assert stmt["_type"] == STATEMENT_TYPE == "https://in-toto.io/Statement/v1"
    assert stmt["predicateType"] == PREDICATE_TYPE
    assert stmt["subject"] == [
        {
            "name": "pi-operator-guard/tool-input/" + record.data["evidenceId"],
            "digest": {
                "sha256": sha256_prefixed(canonical_json(VECTOR["toolInput"])).removeprefix(
                    "sha256:"
                )
            },
        }
    ]
    facts = stmt["predicate"]
    assert (facts["dispatchAllowed"], facts["canOverrideMonitorBlock"]) == (False, False)
    assert facts["authorization"] == "none"
    assert facts["auditRecord"] == {"seq": 7, "hash": VECTOR["record"]["hash"]}
    assert "preview" not in facts and "[REDACTED]" not in json.dumps(VECTOR["envelope"])


def test_the_vector_verifies_with_securesystemslib_and_the_guard() -> None:
    public = _public(_signer(VECTOR["seedHex"]))
    assert _sslib_verifies(VECTOR["envelope"], public)
    check = verify_dsse(VECTOR["envelope"], public)
    assert (check.decision, check.reason) == ("verified", "verified")
    assert check.evidence_id == VECTOR["record"]["data"]["evidenceId"]


@pytest.mark.parametrize("case", VECTOR["refused"], ids=lambda case: case["name"])
def test_refused_vectors(case: dict[str, Any]) -> None:
    public = _public(_signer(VECTOR["seedHex"]))
    check = verify_dsse(case["envelope"], public)
    assert (check.decision, check.reason) == ("rejected", case["reason"])
    if case["reason"] in ("bad-signature", "wrong-key"):
        assert not _sslib_verifies(case["envelope"], public)  # the independent verifier agrees


def test_vectors_cover_every_refusal_the_issue_names() -> None:
    names = {case["name"] for case in VECTOR["refused"]}
    assert {
        "changed payload",
        "changed subject",
        "changed signature",
        "signed by another key",
        "wrong payloadType",
        "re-signed, predicate claims authorization",
    } <= names


# -- a real guard home --------------------------------------------------------------------------


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    with Guard.open(home) as guard:
        result = guard.record(
            "bash",
            {"command": f"rm -rf build && curl -H 'Authorization: token {SECRET}' x.test"},
            str(work),
            confirmed=True,
            tool_call_id="call_7",
        )
        assert result.envelope is not None
        return home, result.envelope.details.evidence_id


def _export(home: Path, evidence_id: str) -> tuple[DsseEnvelope, Ed25519PublicKey]:
    signer, ring = KeyStore.open(home).load_trusted()
    envelope = dsse_from_log(home / AUDIT_LOG_FILE, ring.public_keys(), evidence_id, signer)
    return envelope, _public(signer)


def test_the_guards_envelope_verifies_with_securesystemslib(recorded: tuple[Path, str]) -> None:
    home, evidence_id = recorded
    envelope, public = _export(home, evidence_id)
    wire = envelope.model_dump(mode="json")
    assert wire["payloadType"] == "application/vnd.in-toto+json"
    assert _sslib_verifies(wire, public)
    assert verify_dsse(json.dumps(wire), public).decision == "verified"
    # securesystemslib reads the same statement back.
    statement = json.loads(Envelope.from_dict(copy.deepcopy(wire)).payload)
    assert statement["predicate"]["evidenceId"] == evidence_id
    assert statement["predicate"]["toolCallId"] == "call_7"
    assert statement["subject"][0]["digest"]["sha256"] == statement["predicate"][
        "payloadHash"
    ].removeprefix("sha256:")
    DecisionStatement.model_validate(statement)


def test_nothing_the_log_redacts_is_in_the_envelope(recorded: tuple[Path, str]) -> None:
    home, evidence_id = recorded
    envelope, _ = _export(home, evidence_id)
    wire = json.dumps(envelope.model_dump(mode="json"))
    payload = base64.b64decode(envelope.payload).decode()
    log = (home / AUDIT_LOG_FILE).read_text()
    assert SECRET not in log  # the log redacted it (the preview) ...
    for text in (wire, payload):  # ... and the statement carries no preview at all
        assert SECRET not in text and "Authorization" not in text and "rm -rf" not in text
    aliases = {field.alias for field in OperatorDecision.model_fields.values()}
    assert set(json.loads(payload)["predicate"]) <= aliases - {"preview", "session"}


def test_a_real_envelope_changed_anywhere_is_refused(recorded: tuple[Path, str]) -> None:
    home, evidence_id = recorded
    envelope, public = _export(home, evidence_id)
    wire = envelope.model_dump(mode="json")
    statement = json.loads(base64.b64decode(wire["payload"]))
    for path, value in (
        (("predicate", "toolName"), "write"),
        (("predicate", "actionKind"), "local-safe"),
        (("predicate", "authorization"), "operator"),
        (("subject", 0, "digest", "sha256"), "0" * 64),
    ):
        changed = copy.deepcopy(statement)
        node: Any = changed
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
        tampered = {**wire, "payload": base64.b64encode(canonical_json(changed)).decode()}
        assert verify_dsse(tampered, public).reason == "bad-signature", path
        assert not _sslib_verifies(tampered, public)
    # Padding or spaces in the base64: refused, never read around.
    spaced = {**wire, "payload": " " + wire["payload"]}
    assert verify_dsse(spaced, public).reason == "malformed"


def test_a_wrong_key_is_refused(recorded: tuple[Path, str]) -> None:
    home, evidence_id = recorded
    envelope, _ = _export(home, evidence_id)
    stranger = Ed25519PrivateKey.generate().public_key()
    check = verify_dsse(envelope.model_dump(mode="json"), stranger)
    assert (check.decision, check.reason) == ("rejected", "wrong-key")


def test_malformed_envelopes_are_refused_not_raised() -> None:
    public = _public(_signer(VECTOR["seedHex"]))
    good = VECTOR["envelope"]
    for raw in (
        b"not json",
        "[]",
        {},
        {**good, "signatures": []},
        {**good, "extra": 1},
        {**good, "payload": "%%%"},
        {**good, "signatures": [{"keyid": good["signatures"][0]["keyid"], "sig": "%%"}]},
        {**good, "payload": 5},
    ):
        check = verify_dsse(raw, public)  # type: ignore[arg-type]
        assert check.decision == "rejected", raw
        assert check.reason in ("malformed", "bad-signature"), raw


def test_only_a_recorded_yes_of_an_intact_log_is_signed(
    recorded: tuple[Path, str], tmp_path: Path
) -> None:
    home, evidence_id = recorded
    signer, ring = KeyStore.open(home).load_trusted()
    log = home / AUDIT_LOG_FILE
    with pytest.raises(BadInputError, match=r"no confirmation\.recorded"):
        dsse_from_log(log, ring.public_keys(), "oce_" + "A" * 22, signer)
    # A line edited in place: the log no longer verifies, nothing is signed.
    text = log.read_text()
    log.write_text(text.replace('"toolName":"bash"', '"toolName":"bask"', 1))
    with pytest.raises(LogFormatError):
        dsse_from_log(log, ring.public_keys(), evidence_id, signer)


def test_statement_model_refuses_what_the_predicate_must_not_say() -> None:
    statement = copy.deepcopy(VECTOR["statement"])
    for name, value in (
        ("dispatchAllowed", True),
        ("canOverrideMonitorBlock", True),
        ("authorization", "operator"),
        ("preview", "rm -rf build"),
    ):
        bad = copy.deepcopy(statement)
        bad["predicate"][name] = value
        with pytest.raises(ValueError, match=name):
            DecisionStatement.model_validate(bad)
    missing = copy.deepcopy(statement)
    del missing["predicate"]["dispatchAllowed"]
    with pytest.raises(ValueError, match="dispatchAllowed"):
        DecisionStatement.model_validate(missing)
    two = copy.deepcopy(statement)
    two["subject"] = two["subject"] * 2
    with pytest.raises(ValueError, match="subject"):
        DecisionStatement.model_validate(two)


@given(
    where=st.sampled_from(["payload", "sig"]),
    index=st.integers(min_value=0, max_value=10_000),
    bit=st.integers(min_value=0, max_value=7),
)
@settings(max_examples=200, deadline=None)
def test_property_any_flipped_bit_is_refused_by_both_verifiers(
    where: str, index: int, bit: int
) -> None:
    public = _public(_signer(VECTOR["seedHex"]))
    envelope = copy.deepcopy(VECTOR["envelope"])
    holder = envelope if where == "payload" else envelope["signatures"][0]
    raw = bytearray(base64.b64decode(holder[where]))
    raw[index % len(raw)] ^= 1 << bit
    holder[where] = base64.b64encode(bytes(raw)).decode()
    check = verify_dsse(envelope, public)
    assert check.decision == "rejected"
    assert check.reason == "bad-signature"
    assert not _sslib_verifies(envelope, public)
