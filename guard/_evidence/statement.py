"""Evidence as an in-toto Statement v1: the shapes of the statement, its subject and our
predicate, "operator decision, report-only" (docs/dsse.md).

The statement says, of one tool input (the subject: its RFC 8785 hash, the evidence's
``payloadHash``), what the guard recorded when the operator said yes: the evidence's signed
facts as the audit log's ``confirmation.recorded`` record holds them, the record's place in
the log, and the three report-only facts. It carries nothing the log redacts: no preview,
no tool input, no session; only what the record keeps verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from audit.wire import (
    WIRE_CONFIG,
    ActionKind,
    Approver,
    AuditRecord,
    EvidenceId,
    GrantUseRef,
    IsoMillis,
    KeyId,
    Origin,
    Sha256,
    canonical_json,
)
from guard._evidence.models import ExactFalse

__all__ = [
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "SUBJECT_PREFIX",
    "AuditRecordRef",
    "DecisionStatement",
    "Digest",
    "OperatorDecision",
    "Subject",
    "decision_from_record",
    "statement_bytes",
    "statement_for",
]

STATEMENT_TYPE: Literal["https://in-toto.io/Statement/v1"] = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE: Literal["urn:pi-operator-guard:operator-decision:report-only:v1"] = (
    "urn:pi-operator-guard:operator-decision:report-only:v1"
)
"""Ours: the version is in the name, as in ``pi-operator-guard/evidence/v1``; a change of
the predicate's shape is a new type, never an edit of this one."""
SUBJECT_PREFIX = "pi-operator-guard/tool-input/"
"""The subject's name: this prefix and the evidence id (the tool input itself is never
named: its hash is the digest)."""

_CredentialId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,1366}$")]


class _Absent(BaseModel):
    """A wire shape whose optional members are absent, never ``null``."""

    model_config = WIRE_CONFIG

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class AuditRecordRef(BaseModel):
    """The ``confirmation.recorded`` record the facts come from: its ``seq`` and ``hash``
    (``pi-guard audit prove`` proves it is in the log)."""

    model_config = WIRE_CONFIG

    seq: int = Field(ge=0)
    hash: Sha256


class OperatorDecision(_Absent):
    """The predicate: the operator's yes to one exact action, report-only.

    ``dispatchAllowed``, ``canOverrideMonitorBlock`` and ``authorization`` are required and
    can only say "no": a statement of this type never authorizes anything.
    """

    evidence_id: EvidenceId
    origin: Origin
    action_kind: ActionKind
    tool_name: str = Field(min_length=1, max_length=256)
    path: str | None = Field(default=None, min_length=1, max_length=16384)
    scope: str | None = Field(default=None, min_length=1, max_length=16384)
    payload_hash: Sha256
    """The RFC 8785 hash of the tool input: the subject's digest."""
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)
    covered_by: GrantUseRef | None = None
    approver: Approver | None = None
    operator_credential: _CredentialId | None = None
    created_at_iso: IsoMillis
    expires_at_iso: IsoMillis
    key_id: KeyId
    """The key that signed the evidence itself."""
    audit_record: AuditRecordRef
    dispatch_allowed: ExactFalse
    can_override_monitor_block: ExactFalse
    authorization: Literal["none"]


class Digest(BaseModel):
    """A subject's digest: SHA-256 only, lowercase hex."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Subject(BaseModel):
    """An in-toto ResourceDescriptor with a name and a digest."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=256)
    digest: Digest


class DecisionStatement(BaseModel):
    """An in-toto Statement v1 whose predicate is an :class:`OperatorDecision`."""

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, serialize_by_alias=True, validate_by_alias=True
    )

    type_: Literal["https://in-toto.io/Statement/v1"] = Field(alias="_type")
    subject: list[Subject] = Field(
        min_length=1, max_length=1, description="exactly one: the tool input"
    )
    predicate_type: Literal["urn:pi-operator-guard:operator-decision:report-only:v1"] = Field(
        alias="predicateType"
    )
    predicate: OperatorDecision


# The record's members the predicate takes; everything else (preview, session) stays out.
_TAKEN = (
    "evidenceId",
    "origin",
    "actionKind",
    "toolName",
    "path",
    "scope",
    "payloadHash",
    "toolCallId",
    "coveredBy",
    "approver",
    "operatorCredential",
    "createdAtIso",
    "expiresAtIso",
    "keyId",
)


def decision_from_record(record: AuditRecord) -> OperatorDecision:
    """The predicate of a ``confirmation.recorded`` record (``ValueError`` for another
    event; a ``ValidationError`` when its data is not a yes's)."""
    if record.event != "confirmation.recorded":
        raise ValueError(f"record {record.seq} is {record.event}, not confirmation.recorded")
    data: Mapping[str, Any] = record.data
    taken = {name: data[name] for name in _TAKEN if data.get(name) is not None}
    return OperatorDecision.model_validate(
        {
            **taken,
            "auditRecord": {"seq": record.seq, "hash": record.hash},
            "dispatchAllowed": False,
            "canOverrideMonitorBlock": False,
            "authorization": "none",
        }
    )


def statement_for(decision: OperatorDecision) -> DecisionStatement:
    """The statement whose one subject is the tool input ``decision`` is about."""
    digest = decision.payload_hash.removeprefix("sha256:")
    return DecisionStatement.model_validate(
        {
            "_type": STATEMENT_TYPE,
            "subject": [
                {"name": SUBJECT_PREFIX + decision.evidence_id, "digest": {"sha256": digest}}
            ],
            "predicateType": PREDICATE_TYPE,
            "predicate": decision.model_dump(mode="json"),
        }
    )


def statement_bytes(statement: DecisionStatement) -> bytes:
    """The DSSE payload: the statement's RFC 8785 bytes (one spelling, so the same facts
    always sign to the same envelope)."""
    return canonical_json(statement.model_dump(mode="json"))
