"""Minting and parsing v1 evidence envelopes (docs/monitor.md, "The envelope (v1)").

Signature: Ed25519 over ``b"pi-operator-guard/evidence/v1\\n" + JCS(details
without "signature")``. The prefix separates this use of the key from the audit
head's, so a signature made for one can never pass as the other.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from audit import CanonicalizationError, JsonInputError
from audit.wire import Approver, Origin, b64url_encode, canonical_json, format_iso, load_json
from guard._errors import MalformedEvidence
from guard._evidence.fingerprint import Fingerprint
from guard._evidence.keys import Signer
from guard._evidence.models import (
    EVIDENCE_CUSTOM_TYPE,
    EVIDENCE_SCHEMA,
    CoveredBy,
    EvidenceDetails,
    EvidenceEnvelope,
)
from guard._operator import OperatorSignature, approval_statement

__all__ = [
    "MAX_ENVELOPE_BYTES",
    "ParsedEnvelope",
    "Reservation",
    "envelope_content",
    "mint_envelope",
    "new_evidence_id",
    "parse_envelope",
    "reserve",
    "signing_message",
]

MAX_ENVELOPE_BYTES = 16 * 1024
_DOMAIN = b"pi-operator-guard/evidence/v1\n"


def new_evidence_id() -> str:
    """``oce_`` + 128 random bits, unpadded base64url."""
    return "oce_" + b64url_encode(secrets.token_bytes(16))


def signing_message(details: Mapping[str, Any]) -> bytes:
    """The exact bytes signed: domain prefix + JCS of ``details`` minus ``signature``."""
    unsigned = {k: v for k, v in details.items() if k != "signature"}
    return _DOMAIN + canonical_json(unsigned)


def envelope_content(evidence_id: str, tool_name: str) -> str:
    """The human line; no consumer reads it."""
    return (
        f"operator-confirmation-evidence: decision=recorded id={evidence_id} "
        f"tool={tool_name} dispatch=no override=no authorization=none"
    )


@dataclass(frozen=True)
class Reservation:
    """An envelope's id and lifetime fixed before the operator answers, so that the
    operator's authenticator can sign its approval statement (``statement``) first."""

    evidence_id: str
    created: datetime
    expires: datetime
    key_id: str
    fingerprint: Fingerprint
    tool_call_id: str | None
    statement: dict[str, Any]


def reserve(
    key_id: str,
    fingerprint: Fingerprint,
    *,
    ttl_seconds: int,
    now: datetime,
    tool_call_id: str | None = None,
) -> Reservation:
    """A fresh evidence id and lifetime for ``fingerprint``, and the statement an envelope
    minted with them (:func:`mint_envelope`, ``reservation=``) will have."""
    evidence_id = new_evidence_id()
    expires = now + timedelta(seconds=ttl_seconds)
    unsigned = _unsigned(fingerprint, evidence_id, now, expires, key_id, "runtime-ui-confirm")
    if tool_call_id is not None:
        unsigned["toolCallId"] = tool_call_id
    return Reservation(
        evidence_id, now, expires, key_id, fingerprint, tool_call_id, approval_statement(unsigned)
    )


def _unsigned(
    fingerprint: Fingerprint,
    evidence_id: str,
    created: datetime,
    expires: datetime,
    key_id: str,
    origin: Origin,
) -> dict[str, Any]:
    return {
        "schema": EVIDENCE_SCHEMA,
        "evidenceId": evidence_id,
        "origin": origin,
        "trusted": True,
        **fingerprint.model_dump(mode="json", exclude_none=True),
        "createdAtIso": format_iso(created),
        "expiresAtIso": format_iso(expires),
        "dispatchAllowed": False,
        "canOverrideMonitorBlock": False,
        "authorization": "none",
        "keyId": key_id,
    }


def mint_envelope(
    signer: Signer,
    fingerprint: Fingerprint,
    *,
    origin: Origin,
    ttl_seconds: int,
    now: datetime,
    tool_call_id: str | None = None,
    covered_by: CoveredBy | None = None,
    approver: Approver | None = None,
    reservation: Reservation | None = None,
    operator_signature: OperatorSignature | None = None,
) -> EvidenceEnvelope:
    """Sign a fresh envelope for ``fingerprint``; ``ttl_seconds`` is already validated.

    ``covered_by``: the scoped grant that covered this call, which then ran without a dialog
    of its own; given exactly when ``origin`` is ``runtime-grant`` (else a ``ValidationError``,
    and nothing is returned). It is signed with the rest; without it the details are what
    they always were.

    ``approver``: which screen the operator answered on (``pi-dialog``, ``cli``, ``web``),
    signed into the details as ``approver``; ``None`` leaves the field out, so the details
    are byte for byte what they were before the field existed.

    ``reservation`` (from :func:`reserve`, for this very fingerprint, call id and key): the
    envelope takes its id and lifetime instead of fresh ones (``now`` and ``ttl_seconds`` are
    then unused); ``operator_signature``: the operator's assertion over its statement, signed
    in as ``operatorSignature``. The caller has checked the assertion; a reservation that does
    not fit raises ``ValueError`` and nothing is minted.
    """
    if reservation is not None:
        if (
            reservation.fingerprint != fingerprint
            or reservation.tool_call_id != tool_call_id
            or reservation.key_id != signer.key_id
            or origin != "runtime-ui-confirm"
        ):
            raise ValueError("the reservation is for another call, key or origin")
        evidence_id, created, expires = (
            reservation.evidence_id,
            reservation.created,
            reservation.expires,
        )
    else:
        evidence_id, created = new_evidence_id(), now
        expires = now + timedelta(seconds=ttl_seconds)
    unsigned = _unsigned(fingerprint, evidence_id, created, expires, signer.key_id, origin)
    if tool_call_id is not None:
        unsigned["toolCallId"] = tool_call_id
    if covered_by is not None:
        unsigned["coveredBy"] = covered_by.model_dump(mode="json")
    if approver is not None:
        unsigned["approver"] = approver
    if operator_signature is not None:
        unsigned["operatorSignature"] = operator_signature.model_dump(mode="json")
    signature = b64url_encode(signer.sign(signing_message(unsigned)))
    details = EvidenceDetails.model_validate({**unsigned, "signature": signature})
    return EvidenceEnvelope(
        content=envelope_content(evidence_id, fingerprint.tool_name), details=details
    )


def parse_envelope(raw: Mapping[str, Any] | str | bytes) -> tuple[EvidenceEnvelope, dict[str, Any]]:
    """Strictly parse an envelope; returns the model and the raw ``details`` object.

    The raw details are what the signature is checked over, so any representation
    change (an added ``null``, a reordered-but-equal value) is caught by the signature
    rather than silently normalized away.
    Raises :class:`MalformedEvidence` on anything that is not a well-formed v1 envelope.
    """
    if isinstance(raw, bytes | str):
        try:
            obj = load_json(raw, max_bytes=MAX_ENVELOPE_BYTES)
        except JsonInputError as exc:
            raise MalformedEvidence(exc.code, str(exc)) from None
    elif isinstance(raw, Mapping):
        obj = dict(raw)
        try:
            size = len(canonical_json(obj))
        except CanonicalizationError as exc:
            raise MalformedEvidence("not-canonicalizable", exc.code) from None
        if size > MAX_ENVELOPE_BYTES:
            raise MalformedEvidence("too-large", f"{size} bytes > {MAX_ENVELOPE_BYTES}")
    else:
        raise MalformedEvidence("not-an-object", type(raw).__name__)
    if not isinstance(obj, dict):
        raise MalformedEvidence("not-an-object", type(obj).__name__)
    if obj.get("customType", EVIDENCE_CUSTOM_TYPE) != EVIDENCE_CUSTOM_TYPE:
        raise MalformedEvidence("wrong-custom-type", str(obj.get("customType"))[:80])
    details = obj.get("details")
    if isinstance(details, dict) and details.get("schema") not in (None, EVIDENCE_SCHEMA):
        raise MalformedEvidence("unsupported-schema", str(details.get("schema"))[:80])
    try:
        # camelCase only: the wire has one spelling of each field, whatever the Python names are.
        envelope = EvidenceEnvelope.model_validate(obj, by_alias=True, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise MalformedEvidence("schema-violation", f"{where}: {first['msg']}") from None
    assert isinstance(details, dict)
    return envelope, details


@dataclass(frozen=True)
class ParsedEnvelope:
    """The outcome of :func:`parse_envelope` on one input, kept for the next reader of the
    same input: :meth:`get` returns what it returned or raises what it raised."""

    result: tuple[EvidenceEnvelope, dict[str, Any]] | None
    error: MalformedEvidence | None

    @classmethod
    def of(cls, raw: Mapping[str, Any] | str | bytes) -> ParsedEnvelope:
        try:
            return cls(parse_envelope(raw), None)
        except MalformedEvidence as exc:
            return cls(None, exc)

    def get(self) -> tuple[EvidenceEnvelope, dict[str, Any]]:
        if self.result is None:
            assert self.error is not None
            raise self.error
        return self.result
