"""Enrolment of the operator's authenticator (``navigator.credentials.create``).

Contract: :func:`creation_options` gives the page the options for one ceremony (a fresh
challenge, user verification required, no attestation); :func:`enrolled_credential` checks the
browser's answer with py_webauthn (challenge, origin, RP id, user presence and verification,
one of :data:`ALGORITHMS`) and returns the :class:`OperatorCredential` to put in the keyring, or
raises :class:`EnrolmentRefused` with a one-line reason. Nothing here writes anything.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from audit.wire import b64url_encode, format_iso
from guard._errors import BadInputError
from guard._operator.model import ALGORITHMS, OperatorCredential

__all__ = ["RP_NAME", "EnrolmentRefused", "creation_options", "enrolled_credential"]

RP_NAME = "pi-operator-guard"


class EnrolmentRefused(BadInputError):
    """The browser's enrolment answer did not verify; nothing was enrolled."""

    def __init__(self, problem: str) -> None:
        super().__init__("enrolment", problem)


def creation_options(
    challenge: bytes, *, rp_id: str, label: str, exclude: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``PublicKeyCredentialCreationOptions`` as JSON (binary fields base64url)."""
    return {
        "challenge": b64url_encode(challenge),
        "rp": {"id": rp_id, "name": RP_NAME},
        "user": {
            "id": b64url_encode(secrets.token_bytes(16)),
            "name": label,
            "displayName": label,
        },
        "pubKeyCredParams": [{"type": "public-key", "alg": alg} for alg in ALGORITHMS],
        "authenticatorSelection": {"userVerification": "required", "residentKey": "discouraged"},
        "attestation": "none",
        "excludeCredentials": [{"type": "public-key", "id": c} for c in exclude],
        "timeout": 120_000,
    }


def enrolled_credential(
    answer: object,
    *,
    challenge: bytes,
    rp_id: str,
    origin: str,
    label: str,
    now: datetime,
) -> OperatorCredential:
    """Verify the browser's ``PublicKeyCredential`` (JSON) and describe the new credential."""
    if not isinstance(answer, dict):
        raise EnrolmentRefused("the answer is not a JSON object")
    # py_webauthn (and the x509 and ASN.1 stack under it) only where a passkey is enrolled.
    from webauthn import verify_registration_response
    from webauthn.helpers import decode_credential_public_key
    from webauthn.helpers.cose import COSEAlgorithmIdentifier
    from webauthn.helpers.exceptions import WebAuthnException

    try:
        verified = verify_registration_response(
            credential=answer,
            expected_challenge=challenge,
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_presence=True,
            require_user_verification=True,
            supported_pub_key_algs=[COSEAlgorithmIdentifier(a) for a in ALGORITHMS],
        )
        algorithm = int(decode_credential_public_key(verified.credential_public_key).alg or 0)
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        raise EnrolmentRefused(f"the authenticator's answer did not verify: {exc}") from None
    if algorithm not in ALGORITHMS:
        raise EnrolmentRefused(f"algorithm {algorithm} is not one of {list(ALGORITHMS)}")
    return OperatorCredential.model_validate(
        {
            "credentialId": b64url_encode(verified.credential_id),
            "publicKey": b64url_encode(verified.credential_public_key),
            "algorithm": algorithm,
            "signCount": verified.sign_count,
            "label": label,
            "rpId": rp_id,
            "origin": origin,
            "enrolledAtIso": format_iso(now),
        }
    )
