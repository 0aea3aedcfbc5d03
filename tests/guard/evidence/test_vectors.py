"""Known-answer vector for the v1 evidence signature (see tests/vectors/README.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit import b64url_encode
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
