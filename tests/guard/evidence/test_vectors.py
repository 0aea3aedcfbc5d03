"""Known-answer vector for the v1 evidence signature (see tests/vectors/README.md)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit.wire import b64url_encode, canonical_json
from guard import Fingerprint
from guard._evidence.envelope import envelope_content, signing_message
from guard._evidence.keys import Keyring, KeyringEntry, PublicKeyring, Signer, key_id_for
from guard.evidence import SqliteLedger, check_and_consume, payload_hash

VECTOR = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "evidence-v1.json").read_text()
)


def test_payload_hash_known_answer() -> None:
    # JCS of {"command": "rm -rf build"} is the same text with no spaces.
    expected = "sha256:" + hashlib.sha256(b'{"command":"rm -rf build"}').hexdigest()
    assert payload_hash(VECTOR["toolInput"]) == expected == VECTOR["unsignedDetails"]["payloadHash"]


def test_key_id_known_answer() -> None:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(VECTOR["seedHex"]))
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert key_id_for(private.public_key()) == "ed25519:" + hashlib.sha256(raw).hexdigest()
    assert VECTOR["unsignedDetails"]["keyId"] == key_id_for(private.public_key())


def test_signing_message_and_signature_known_answer() -> None:
    message = signing_message(VECTOR["unsignedDetails"])
    assert message.hex() == VECTOR["signingMessageHex"]
    assert message.startswith(b"pi-operator-guard/evidence/v1\n{")
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(VECTOR["seedHex"]))
    assert b64url_encode(private.sign(message)) == VECTOR["signature"]
    private.public_key().verify(private.sign(message), bytes.fromhex(VECTOR["signingMessageHex"]))


KEYRING = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "keyring-v1.json").read_text()
)


def test_keyring_signature_known_answer(tmp_path: Path) -> None:
    from guard import KeyringError
    from guard._evidence.keys import Keyring, _check_signatures

    keyring = Keyring.model_validate_json(json.dumps(KEYRING["keyring"]))
    message = keyring.signing_message()
    assert message.hex() == KEYRING["signingMessageHex"]
    assert message.startswith(b"pi-operator-guard/keyring/v1\n{")
    # The message is the JCS of the file minus "signatures" (no null members).
    unsigned = {k: v for k, v in KEYRING["keyring"].items() if k != "signatures"}
    assert message == b"pi-operator-guard/keyring/v1\n" + canonical_json(unsigned)
    for seed, sig in zip(
        (KEYRING["newSeedHex"], KEYRING["oldSeedHex"]),
        KEYRING["keyring"]["signatures"],
        strict=True,
    ):
        private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))
        assert sig["keyId"] == key_id_for(private.public_key())
        assert b64url_encode(private.sign(message)) == sig["signature"]
    _check_signatures(keyring, tmp_path / "keyring.json")
    # One byte of an entry changed: refused.
    edited = json.loads(json.dumps(KEYRING["keyring"]))
    edited["keys"][0]["retiredAtIso"] = "2026-11-22T01:00:00.001Z"
    try:
        _check_signatures(
            Keyring.model_validate_json(json.dumps(edited)), tmp_path / "keyring.json"
        )
    except KeyringError:
        pass
    else:
        raise AssertionError("an edited keyring verified")


# The tests above pin the bytes; the ones below run the guard's own signer and consumer on them,
# so a guard that signed or verified anything else than those bytes fails here.


def _vector_key() -> tuple[Signer, PublicKeyring]:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(VECTOR["seedHex"]))
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    entry = KeyringEntry(
        key_id=VECTOR["unsignedDetails"]["keyId"],
        public_key=b64url_encode(raw),
        status="active",
        created_at_iso="2026-11-22T00:00:00.000Z",
    )
    return Signer(private, entry.key_id), PublicKeyring.from_keyring(Keyring(keys=(entry,)))


def _vector_envelope(signature: str) -> dict[str, Any]:
    details = {**VECTOR["unsignedDetails"], "signature": signature}
    return {
        "content": envelope_content(details["evidenceId"], details["toolName"]),
        "details": details,
    }


def _pending() -> Fingerprint:
    d = VECTOR["unsignedDetails"]
    return Fingerprint(
        action_kind=d["actionKind"],
        tool_name=d["toolName"],
        scope=d["scope"],
        payload_hash=payload_hash(VECTOR["toolInput"]),
    )


def test_the_guards_signer_produces_the_vector_signature() -> None:
    signer, _ = _vector_key()
    message = signing_message({**VECTOR["unsignedDetails"], "signature": "ignored"})
    assert b64url_encode(signer.sign(message)) == VECTOR["signature"]


def test_the_guards_consumer_accepts_the_vector_and_nothing_else(tmp_path: Path) -> None:
    _, keyring = _vector_key()
    now = datetime(2026, 11, 22, 1, 0, 10, tzinfo=UTC)
    ledger = SqliteLedger.open(tmp_path / "ledger.sqlite3")
    try:
        sig = VECTOR["signature"]
        flipped = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
        call = VECTOR["unsignedDetails"]["toolCallId"]
        bad = check_and_consume(
            _vector_envelope(flipped),
            _pending(),
            keyring=keyring,
            ledger=ledger,
            now=now,
            tool_call_id=call,
        )
        assert bad.reasons == ("signature-invalid",)
        good = check_and_consume(
            _vector_envelope(sig),
            _pending(),
            keyring=keyring,
            ledger=ledger,
            now=now,
            tool_call_id=call,
        )
        assert good.decision == "consumed", good
        assert good.evidence_id == VECTOR["unsignedDetails"]["evidenceId"]
    finally:
        ledger.close()
