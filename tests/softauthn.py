"""A software WebAuthn authenticator and browser for tests: enrol, then sign assertions.

It plays both parts the real page leaves to Chromium: the authenticator (a P-256 or Ed25519
key, a counter, the authenticator data of W3C WebAuthn Level 2, section 6.1) and the client
(``clientDataJSON`` with type, challenge and origin). Every knob a refusal test needs is a
keyword: another type, origin, RP id, flags or counter. Real-browser tests use Chromium's
virtual authenticator instead (tests/guard/approvals/test_passkey_browser.py).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from collections.abc import Mapping
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit.wire import b64url_encode
from guard._operator import OperatorSignature, approval_statement, statement_challenge

__all__ = ["ORIGIN", "RP_ID", "SoftAuthenticator"]

RP_ID = "localhost"
ORIGIN = "http://localhost:8790"
UP, UV, AT = 0x01, 0x04, 0x40


class SoftAuthenticator:
    """One credential on a software authenticator (``algorithm`` -7 or -8)."""

    def __init__(self, *, algorithm: int = -7, rp_id: str = RP_ID, origin: str = ORIGIN) -> None:
        self.algorithm = algorithm
        self.rp_id = rp_id
        self.origin = origin
        self.credential_id = secrets.token_bytes(16)
        self.counter = 0
        self._ec = ec.generate_private_key(ec.SECP256R1()) if algorithm == -7 else None
        self._ed = Ed25519PrivateKey.generate() if algorithm == -8 else None

    @property
    def id(self) -> str:
        return b64url_encode(self.credential_id)

    def cose_key(self) -> bytes:
        if self._ec is not None:
            numbers = self._ec.public_key().public_numbers()
            return cbor2.dumps(
                {
                    1: 2,
                    3: -7,
                    -1: 1,
                    -2: numbers.x.to_bytes(32, "big"),
                    -3: numbers.y.to_bytes(32, "big"),
                }
            )
        assert self._ed is not None
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        raw = self._ed.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: raw})

    def _sign(self, data: bytes) -> bytes:
        if self._ec is not None:
            return self._ec.sign(data, ec.ECDSA(hashes.SHA256()))
        assert self._ed is not None
        return self._ed.sign(data)

    def _client(self, kind: str, challenge: bytes, origin: str | None) -> bytes:
        return json.dumps(
            {
                "type": kind,
                "challenge": b64url_encode(challenge),
                "origin": origin or self.origin,
                "crossOrigin": False,
            }
        ).encode()

    def register(self, challenge: bytes, *, flags: int = UP | UV) -> dict[str, Any]:
        """The browser's ``PublicKeyCredential`` JSON for ``navigator.credentials.create``."""
        auth_data = (
            hashlib.sha256(self.rp_id.encode()).digest()
            + bytes([flags | AT])
            + struct.pack(">I", self.counter)
            + bytes(16)  # AAGUID: none
            + struct.pack(">H", len(self.credential_id))
            + self.credential_id
            + self.cose_key()
        )
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client = self._client("webauthn.create", challenge, None)
        return {
            "id": self.id,
            "rawId": self.id,
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url_encode(client),
                "attestationObject": b64url_encode(attestation),
            },
        }

    def assertion(
        self,
        challenge: bytes,
        *,
        flags: int = UP | UV,
        kind: str = "webauthn.get",
        origin: str | None = None,
        rp_id: str | None = None,
        counter: int | None = None,
    ) -> OperatorSignature:
        """An assertion over ``challenge``; each keyword bends one part for a refusal test."""
        if counter is None:
            self.counter += 1
            counter = self.counter
        auth_data = (
            hashlib.sha256((rp_id or self.rp_id).encode()).digest()
            + bytes([flags])
            + struct.pack(">I", counter)
        )
        client = self._client(kind, challenge, origin)
        signature = self._sign(auth_data + hashlib.sha256(client).digest())
        return OperatorSignature(
            credential_id=self.id,
            authenticator_data=b64url_encode(auth_data),
            client_data_json=b64url_encode(client),
            signature=b64url_encode(signature),
        )

    def sign_details(self, details: Mapping[str, Any], **bend: Any) -> OperatorSignature:
        """An assertion over the approval statement of envelope details ``details``."""
        return self.assertion(statement_challenge(approval_statement(details)), **bend)
