"""Known-answer vector for the v1 evidence signature (see tests/vectors/README.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit import b64url_encode, canonical_json
from guard import payload_hash
from guard._evidence.envelope import signing_message
from guard._evidence.keys import key_id_for

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
