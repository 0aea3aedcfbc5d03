"""Checking an operator's signature on an envelope (docs/monitor.md, "The operator's signature").

Contract: :func:`check_operator_signature` takes an envelope's *raw* signed details (what the
guard's Ed25519 signature was checked over) and the enrolled credentials, and answers with a
typed :class:`OperatorCheck`: verified, or the first failed check's reason. The checks, in
order (W3C WebAuthn Level 2, section 7.2, "Verifying an Authentication Assertion"):

    credential   -> operator-unknown-credential / operator-credential-removed
    encoding     -> operator-malformed
    type         -> operator-wrong-type          (clientData.type is webauthn.get)
    challenge    -> operator-challenge-mismatch  (SHA-256 of *this* envelope's statement)
    origin       -> operator-wrong-origin        (the enrolled origin; never cross-origin)
    RP id        -> operator-wrong-rp-id         (authenticatorData's SHA-256 of the RP id)
    presence     -> operator-not-present         (flag UP)
    verification -> operator-not-verified        (flag UV)
    sign count   -> operator-sign-count          (above the enrolled count, unless both are 0)
    signature    -> operator-signature-invalid   (py_webauthn checks all of the above again
                                                  and the signature with the COSE key)

A sign count is checked here against the enrolment only; a consumer's ledger also keeps the
highest count it has seen (:meth:`ConsumptionLedger.advance_sign_count`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from audit.wire import b64url_encode
from guard._operator.model import (
    OperatorCredential,
    OperatorSignature,
    approval_statement,
    statement_challenge,
)

__all__ = ["OPERATOR_REASONS", "OperatorCheck", "OperatorReason", "check_operator_signature"]

OperatorReason = Literal[
    "operator-unknown-credential",
    "operator-credential-removed",
    "operator-malformed",
    "operator-wrong-type",
    "operator-challenge-mismatch",
    "operator-wrong-origin",
    "operator-wrong-rp-id",
    "operator-not-present",
    "operator-not-verified",
    "operator-sign-count",
    "operator-signature-invalid",
]
OPERATOR_REASONS: tuple[OperatorReason, ...] = get_args(OperatorReason)

_UP = 0x01  # authenticator data flags, WebAuthn section 6.1
_UV = 0x04


@dataclass(frozen=True)
class OperatorCheck:
    """What the operator's signature on one envelope proved: ``reason`` is ``None`` when it
    verified; ``credential`` is the enrolled credential it named (if any), ``sign_count`` the
    counter the authenticator reported."""

    reason: OperatorReason | None
    credential: OperatorCredential | None = None
    sign_count: int = 0

    @property
    def verified(self) -> bool:
        return self.reason is None


def _bytes(text: str) -> bytes | None:
    """Canonical unpadded base64url of any length, else ``None``."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if b64url_encode(raw) == text else None


def check_operator_signature(
    details: Mapping[str, Any],
    signature: OperatorSignature,
    credentials: Mapping[str, OperatorCredential],
) -> OperatorCheck:
    """Check ``signature`` against the statement of ``details``; see the module docstring."""
    credential = credentials.get(signature.credential_id)
    if credential is None:
        return OperatorCheck("operator-unknown-credential")
    if credential.status != "active":
        return OperatorCheck("operator-credential-removed", credential)
    auth_data = _bytes(signature.authenticator_data)
    client_bytes = _bytes(signature.client_data_json)
    if auth_data is None or client_bytes is None or len(auth_data) < 37:
        return OperatorCheck("operator-malformed", credential)
    if _bytes(signature.signature) is None or _bytes(signature.credential_id) is None:
        return OperatorCheck("operator-malformed", credential)
    try:
        client = json.loads(client_bytes)
    except (UnicodeDecodeError, ValueError):
        return OperatorCheck("operator-malformed", credential)
    if not isinstance(client, dict):
        return OperatorCheck("operator-malformed", credential)
    count = int.from_bytes(auth_data[33:37], "big")
    challenge = statement_challenge(approval_statement(details))
    failed = _first_failure(client, auth_data, count, challenge, credential)
    if failed is not None:
        return OperatorCheck(failed, credential, count)
    # py_webauthn only where a passkey's signature is checked, never at start-up.
    from webauthn import verify_authentication_response

    try:
        verify_authentication_response(
            credential={
                "id": signature.credential_id,
                "rawId": signature.credential_id,
                "type": "public-key",
                "response": {
                    "authenticatorData": signature.authenticator_data,
                    "clientDataJSON": signature.client_data_json,
                    "signature": signature.signature,
                },
            },
            expected_challenge=challenge,
            expected_rp_id=credential.rp_id,
            expected_origin=credential.origin,
            credential_public_key=_bytes(credential.public_key) or b"",
            credential_current_sign_count=credential.sign_count,
            require_user_verification=True,
        )
    except Exception:  # untrusted bytes into a parser: every failure refuses
        # Anything the library refuses after our own checks passed is the signature's fault
        # or an unusable enrolled key (not canonical base64url, not a COSE_Key map): nothing
        # is believed, and the consumer answers rather than crashes.
        return OperatorCheck("operator-signature-invalid", credential, count)
    return OperatorCheck(None, credential, count)


def _first_failure(
    client: dict[str, Any],
    auth_data: bytes,
    count: int,
    challenge: bytes,
    credential: OperatorCredential,
) -> OperatorReason | None:
    if client.get("type") != "webauthn.get":
        return "operator-wrong-type"
    if client.get("challenge") != b64url_encode(challenge):
        return "operator-challenge-mismatch"
    if client.get("origin") != credential.origin or client.get("crossOrigin") is True:
        return "operator-wrong-origin"
    if "topOrigin" in client and client["topOrigin"] != credential.origin:
        return "operator-wrong-origin"
    if auth_data[:32] != hashlib.sha256(credential.rp_id.encode()).digest():
        return "operator-wrong-rp-id"
    flags = auth_data[32]
    if not flags & _UP:
        return "operator-not-present"
    if not flags & _UV:
        return "operator-not-verified"
    if (count or credential.sign_count) and count <= credential.sign_count:
        return "operator-sign-count"
    return None
