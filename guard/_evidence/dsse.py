"""The operator-decision statement in a DSSE envelope, signed with the guard's key, and the
verifier's checks (docs/dsse.md).

Signature: Ed25519 over DSSE's pre-authentication encoding, ``PAE(payloadType, payload)`` =
``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`` (LEN: ASCII decimal). The message
starts with ``DSSEv1``, so it can never be mistaken for the other messages the key signs
(evidence and the keyring start with ``pi-operator-guard/``, checkpoints with their origin
line). ``payload`` and ``sig`` are standard base64, as DSSE's reference implementations
write them; ``keyid`` is the key's id in the keyring (``ed25519:`` + hex SHA-256).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from audit import JsonInputError, LogFormatError
from audit.verify import read_records, verify_log
from audit.wire import WIRE_CONFIG, AuditRecord, load_json
from guard._errors import BadInputError, KeyringError
from guard._evidence.keys import PublicKeyring, Signer, key_id_for
from guard._evidence.statement import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    SUBJECT_PREFIX,
    DecisionStatement,
    decision_from_record,
    statement_bytes,
    statement_for,
)

__all__ = [
    "MAX_DSSE_BYTES",
    "PAYLOAD_TYPE",
    "DsseCheck",
    "DsseEnvelope",
    "DsseReason",
    "DsseSignature",
    "dsse_from_log",
    "pae",
    "read_public_key",
    "sign_statement",
    "verify_dsse",
]

PAYLOAD_TYPE: Literal["application/vnd.in-toto+json"] = "application/vnd.in-toto+json"
MAX_DSSE_BYTES = 64 * 1024
_MAX_KEY_FILE_BYTES = 1 << 20

DsseReason = Literal[
    "verified",
    "malformed",
    "wrong-payload-type",
    "wrong-key",
    "bad-signature",
    "wrong-statement-type",
    "wrong-predicate-type",
    "predicate-schema",
    "not-report-only",
    "subject-mismatch",
]
"""Why :func:`verify_dsse` refused an envelope (``verified``: it did not)."""


class DsseSignature(BaseModel):
    """One DSSE signature: the signing key's id and the standard-base64 signature."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    keyid: str = Field(max_length=256)
    sig: str = Field(min_length=1, max_length=1024)


class DsseEnvelope(BaseModel):
    """A DSSE envelope (``payload``: the statement's bytes in standard base64)."""

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, serialize_by_alias=True, validate_by_alias=True
    )

    payload: str = Field(max_length=MAX_DSSE_BYTES)
    payload_type: str = Field(alias="payloadType", max_length=256)
    signatures: list[DsseSignature] = Field(min_length=1, max_length=16)


class DsseCheck(BaseModel):
    """What :func:`verify_dsse` found: ``decision`` and the first failed check's ``reason``."""

    model_config = WIRE_CONFIG

    decision: Literal["verified", "rejected"]
    reason: DsseReason
    detail: str
    key_id: str
    evidence_id: str | None = None
    """The predicate's evidence id, once the signature verified."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding: what the signature is over."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign_statement(signer: Signer, statement: DecisionStatement) -> DsseEnvelope:
    """The DSSE envelope of ``statement``, signed by ``signer``."""
    payload = statement_bytes(statement)
    sig = signer.sign(pae(PAYLOAD_TYPE, payload))
    return DsseEnvelope.model_validate(
        {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": PAYLOAD_TYPE,
            "signatures": [{"keyid": signer.key_id, "sig": base64.b64encode(sig).decode()}],
        }
    )


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top)"
    return f"{where}: {first['msg']}"


def verify_dsse(raw: Mapping[str, Any] | str | bytes, public_key: Ed25519PublicKey) -> DsseCheck:
    """Check a DSSE envelope of an operator-decision statement against ``public_key``.

    In order, the first failure deciding: the envelope's shape, ``payloadType``, a signature
    by this key (its ``keyid``) that verifies over the PAE, the statement type, the
    predicate type, the report-only facts, the predicate's schema, and the one subject: its
    name and its digest are those of the tool input the predicate describes.
    """
    key_id = key_id_for(public_key)

    def refuse(reason: DsseReason, detail: str) -> DsseCheck:
        return _refused(key_id, reason, detail)

    try:
        obj = load_json(raw, max_bytes=MAX_DSSE_BYTES) if isinstance(raw, str | bytes) else raw
        envelope = DsseEnvelope.model_validate(obj)
    except JsonInputError as exc:
        return refuse("malformed", f"not JSON: {exc}")
    except ValidationError as exc:
        return refuse("malformed", _first_error(exc))
    if envelope.payload_type != PAYLOAD_TYPE:
        return refuse("wrong-payload-type", f"{envelope.payload_type[:80]!r}, not {PAYLOAD_TYPE}")
    payload = _b64(envelope.payload)
    if payload is None:
        return refuse("malformed", "payload is not standard base64")
    mine = [s for s in envelope.signatures if s.keyid == key_id]
    if not mine:
        named = ", ".join(s.keyid[:80] for s in envelope.signatures)
        return refuse("wrong-key", f"no signature by {key_id} (signed by {named})")
    message = pae(envelope.payload_type, payload)
    if not any(PublicKeyring.verify(public_key, _b64(s.sig) or b"", message) for s in mine):
        return refuse("bad-signature", f"the signature by {key_id} does not verify")
    return _check_statement(payload, key_id)


def _refused(
    key_id: str, reason: DsseReason, detail: str, evidence_id: str | None = None
) -> DsseCheck:
    return DsseCheck(
        decision="rejected", reason=reason, detail=detail, key_id=key_id, evidence_id=evidence_id
    )


def _check_statement(payload: bytes, key_id: str) -> DsseCheck:
    """The signed payload's checks: statement and predicate types, report-only, schema,
    subject."""

    def refuse(reason: DsseReason, detail: str, evidence_id: str | None = None) -> DsseCheck:
        return _refused(key_id, reason, detail, evidence_id)

    try:
        obj = load_json(payload, max_bytes=MAX_DSSE_BYTES)
    except JsonInputError as exc:
        return refuse("malformed", f"payload is not JSON: {exc}")
    if not isinstance(obj, dict) or obj.get("_type") != STATEMENT_TYPE:
        got = obj.get("_type") if isinstance(obj, dict) else type(obj).__name__
        return refuse("wrong-statement-type", f"{str(got)[:80]!r}, not {STATEMENT_TYPE}")
    if obj.get("predicateType") != PREDICATE_TYPE:
        got = str(obj.get("predicateType"))[:80]
        return refuse("wrong-predicate-type", f"{got!r}, not {PREDICATE_TYPE}")
    predicate = obj.get("predicate")
    eid = predicate.get("evidenceId") if isinstance(predicate, dict) else None
    eid = eid if isinstance(eid, str) else None
    if isinstance(predicate, dict):
        for name, only in (
            ("dispatchAllowed", False),
            ("canOverrideMonitorBlock", False),
            ("authorization", "none"),
        ):
            value = predicate.get(name)
            if type(value) is not type(only) or value != only:
                return refuse(
                    "not-report-only", f"predicate.{name} is {value!r}, not {only!r}", eid
                )
    try:
        statement = DecisionStatement.model_validate(obj)
    except ValidationError as exc:
        return refuse("predicate-schema", _first_error(exc), eid)
    decision = statement.predicate
    subject = statement.subject[0]
    expected = decision.payload_hash.removeprefix("sha256:")
    if subject.digest.sha256 != expected:
        return refuse(
            "subject-mismatch",
            f"subject digest {subject.digest.sha256} is not the payload hash {expected}",
            eid,
        )
    if subject.name != SUBJECT_PREFIX + decision.evidence_id:
        return refuse(
            "subject-mismatch", f"subject {subject.name[:80]!r} names another evidence", eid
        )
    return DsseCheck(
        decision="verified",
        reason="verified",
        detail=f"signed by {key_id}: operator decision {decision.evidence_id}, report-only",
        key_id=key_id,
        evidence_id=decision.evidence_id,
    )


def dsse_from_log(
    log_path: Path, keys: Mapping[str, Ed25519PublicKey], evidence_id: str, signer: Signer
) -> DsseEnvelope:
    """The signed statement of the ``confirmation.recorded`` record of ``evidence_id``.

    The log is verified first (every line, and a head signed by one of ``keys``): a line
    edited or added outside the guard is never signed into a statement. Raises
    :class:`audit.LogFormatError` for a log that does not verify and
    :class:`BadInputError` when no yes of that id is recorded.
    """
    result = verify_log(log_path, keys)
    if result.decision != "intact":
        raise LogFormatError(
            log_path, result.line or 0, result.fault or "unanchored", result.detail
        )
    found: AuditRecord | None = None
    for record in read_records(log_path):
        if record.event == "confirmation.recorded" and record.data.get("evidenceId") == evidence_id:
            found = record
            break
    if found is None:
        raise BadInputError(
            "ID", "no confirmation.recorded of this evidence id in the audit log", evidence_id
        )
    return sign_statement(signer, statement_for(decision_from_record(found)))


def read_public_key(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file (``SubjectPublicKeyInfo``) or the one active
    key of a keyring file (``keyring.json``); :class:`BadInputError` for anything else."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise BadInputError("--key", f"cannot read file: {exc.strerror}", str(path)) from None
    if len(data) > _MAX_KEY_FILE_BYTES:
        raise BadInputError("--key", "file too large for a public key", str(path))
    if data.lstrip().startswith(b"-----BEGIN PUBLIC KEY-----"):
        try:
            key = serialization.load_pem_public_key(data)
        except ValueError:
            raise BadInputError("--key", "not a PEM public key", str(path)) from None
        if not isinstance(key, Ed25519PublicKey):
            raise BadInputError("--key", "not an Ed25519 public key", str(path))
        return key
    try:
        ring = PublicKeyring.load(path)
    except KeyringError:
        raise BadInputError(
            "--key", "neither a PEM Ed25519 public key nor a keyring file", str(path)
        ) from None
    active = [key for key, retired in ring.keys.values() if retired is None]
    if len(active) != 1:
        raise BadInputError(
            "--key", f"the keyring has {len(active)} active keys, not one", str(path)
        )
    return active[0]
