"""The wire shapes of the operator's own key: an enrolled credential, an assertion, a statement.

Contract: the *approval statement* is derived from an envelope's signed details, never stored
beside them: ``{"schema": STATEMENT_SCHEMA}`` plus the details' ``evidenceId``, ``actionKind``,
``toolName``, ``path``, ``scope``, ``payloadHash``, ``toolCallId``, ``createdAtIso``,
``expiresAtIso`` and ``keyId`` (absent optional fields stay absent). The WebAuthn challenge the
operator's authenticator signs is SHA-256 of its RFC 8785 (JCS) form, so an assertion is bound
to exactly one envelope. See docs/monitor.md, "The operator's signature".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG, IsoMillis, canonical_json

__all__ = [
    "ALGORITHMS",
    "STATEMENT_FIELDS",
    "STATEMENT_SCHEMA",
    "CoseAlgorithm",
    "OperatorCredential",
    "OperatorSignature",
    "approval_statement",
    "statement_challenge",
]

STATEMENT_SCHEMA = "pi-operator-guard/approval-statement/v1"
STATEMENT_FIELDS = (
    "evidenceId",
    "actionKind",
    "toolName",
    "path",
    "scope",
    "payloadHash",
    "toolCallId",
    "createdAtIso",
    "expiresAtIso",
    "keyId",
)
CoseAlgorithm = Literal[-7, -8, -257]
"""ES256, EdDSA (Ed25519) and RS256: what enrolment asks an authenticator for, in that order."""
ALGORITHMS: tuple[CoseAlgorithm, ...] = (-7, -8, -257)

# Unpadded base64url; the limits are far above any real authenticator's output.
B64Url = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$", min_length=1, max_length=4096)]


class OperatorSignature(BaseModel):
    """A WebAuthn assertion (``navigator.credentials.get``) over an approval statement.

    Every field is unpadded base64url of the bytes the authenticator and browser produced:
    ``authenticatorData`` (RP id hash, flags, sign count), ``clientDataJson`` (the browser's
    JSON: type, challenge, origin) and ``signature`` (over ``authenticatorData ||
    SHA-256(clientDataJson)``, W3C WebAuthn Level 2, section 7.2, step 20).
    """

    model_config = WIRE_CONFIG

    credential_id: B64Url
    authenticator_data: B64Url
    client_data_json: B64Url
    signature: B64Url


class OperatorCredential(BaseModel):
    """One enrolled authenticator credential, as the keyring's signed ``operators`` list holds it.

    ``publicKey`` is the COSE_Key (RFC 9052, section 7) the authenticator gave at enrolment,
    base64url; ``signCount`` its counter then; ``rpId`` and ``origin`` the page it was enrolled
    on, which every assertion must name too. A removed credential stays listed (``removed``),
    so evidence it signed is refused with its own reason.
    """

    model_config = WIRE_CONFIG

    credential_id: B64Url
    public_key: B64Url
    algorithm: CoseAlgorithm
    sign_count: int = Field(ge=0, le=0xFFFFFFFF)
    label: str = Field(min_length=1, max_length=100)
    rp_id: str = Field(min_length=1, max_length=253)
    origin: str = Field(pattern=r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
    status: Literal["active", "removed"] = "active"
    enrolled_at_iso: IsoMillis
    removed_at_iso: IsoMillis | None = None


def approval_statement(details: Mapping[str, Any]) -> dict[str, Any]:
    """The statement an operator signs for the envelope whose signed details are ``details``."""
    statement: dict[str, Any] = {"schema": STATEMENT_SCHEMA}
    for name in STATEMENT_FIELDS:
        if details.get(name) is not None:
            statement[name] = details[name]
    return statement


def statement_challenge(statement: Mapping[str, Any]) -> bytes:
    """The WebAuthn challenge for ``statement``: SHA-256 of its JCS bytes (32 bytes)."""
    return hashlib.sha256(canonical_json(dict(statement))).digest()
