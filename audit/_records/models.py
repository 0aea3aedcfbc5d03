"""The record line, the signed JSON head, which events the log accepts, and the typed events
the appender takes.

Every event's data model lives in :mod:`.log_events` or :mod:`.call_events`;
:data:`EVENT_MODELS` names each with its event. An instance of one is a typed event
(:data:`EventData`); :func:`event_of` gives its event and its data as the log's mapping.
"""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, Field

from audit._errors import UnknownEventError
from audit._records.call_events import (
    ApprovalRefusedData,
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    ConfirmationRequestedData,
    EffectsResolvedData,
    EffectsReviewedData,
    EvidenceConsumedData,
    EvidenceRejectedData,
    NetworkRefusedData,
    PlannerReportedData,
    ToolExecutedData,
)
from audit._records.canonical import canonical_json, sha256_prefixed
from audit._records.fields import WireModel
from audit._records.log_events import (
    GrantCreatedData,
    GrantExpiredData,
    GrantRevokedData,
    GrantUsedData,
    KeyGeneratedData,
    KeyRetiredData,
    KeyRotatedData,
    LogCreatedData,
    LogRecoveredData,
    OperatorEnrolledData,
    OperatorRemovedData,
    SessionEndedData,
    SessionStartedData,
)
from audit._records.wire import IsoMillis, KeyId, Sha256, Signature, parse_iso

__all__ = [
    "EVENT_MODELS",
    "GENESIS_DOMAIN",
    "HEAD_DOMAIN",
    "KNOWN_EVENTS",
    "LOG_SCHEMA",
    "RESERVED_EVENTS",
    "AuditHead",
    "AuditRecord",
    "EventData",
    "event_of",
    "genesis_hash",
]


LOG_SCHEMA = "pi-operator-guard/audit/v1"
GENESIS_DOMAIN = b"pi-operator-guard/audit-genesis/v1\n"
HEAD_DOMAIN = b"pi-operator-guard/audit-head/v1\n"


def genesis_hash(log_id: str) -> str:
    """The ``prev`` of record 0: ``sha256_prefixed(GENESIS_DOMAIN + log_id)``."""
    return sha256_prefixed(GENESIS_DOMAIN + log_id.encode("utf-8"))


class AuditRecord(WireModel):
    """One line of the log: ``canonical_json(record) + "\\n"``.

    ``hash`` is ``sha256_prefixed(canonical_json(record without "hash"))``; ``prev``
    is the previous record's ``hash`` (record 0: :func:`genesis_hash` of its log id).
    """

    seq: int = Field(ge=0)
    ts: IsoMillis
    event: str = Field(min_length=1, max_length=128)
    data: dict[str, Any]
    prev: Sha256
    hash: Sha256

    @property
    def timestamp(self) -> datetime:
        """``ts`` as an aware UTC datetime."""
        return parse_iso(self.ts, "ts")

    def to_line(self) -> bytes:
        """The exact bytes of this record's line, LF included."""
        return canonical_json(self.model_dump(mode="json")) + b"\n"

    def typed_data(self) -> BaseModel:
        """``data`` validated against the event's model (see :data:`EVENT_MODELS`)."""
        return EVENT_MODELS[self.event].model_validate(self.data)


class AuditHead(WireModel):
    """The signed head file ``<log>.head``: names the last record of the log.

    ``signature`` is base64url (no padding) of the Ed25519 signature over
    ``HEAD_DOMAIN + canonical_json(head without "signature")``.
    """

    seq: int = Field(ge=0)
    hash: Sha256
    ts: IsoMillis
    key_id: KeyId
    signature: Signature

    def signing_payload(self) -> bytes:
        """The exact bytes the signature covers."""
        return HEAD_DOMAIN + canonical_json(self.model_dump(mode="json", exclude={"signature"}))


EVENT_MODELS: MappingProxyType[str, type[WireModel]] = MappingProxyType(
    {
        "approval.refused": ApprovalRefusedData,
        "confirmation.declined": ConfirmationDeclinedData,
        "confirmation.recorded": ConfirmationRecordedData,
        "confirmation.requested": ConfirmationRequestedData,
        "evidence.consumed": EvidenceConsumedData,
        "effects.resolved": EffectsResolvedData,
        "effects.reviewed": EffectsReviewedData,
        "evidence.rejected": EvidenceRejectedData,
        "grant.created": GrantCreatedData,
        "grant.expired": GrantExpiredData,
        "grant.revoked": GrantRevokedData,
        "grant.used": GrantUsedData,
        "key.generated": KeyGeneratedData,
        "key.retired": KeyRetiredData,
        "key.rotated": KeyRotatedData,
        "log.created": LogCreatedData,
        "log.recovered": LogRecoveredData,
        "network.refused": NetworkRefusedData,
        "operator.enrolled": OperatorEnrolledData,
        "operator.removed": OperatorRemovedData,
        "planner.reported": PlannerReportedData,
        "session.ended": SessionEndedData,
        "session.started": SessionStartedData,
        "tool.executed": ToolExecutedData,
    }
)
"""Every event name the log accepts, with the model its ``data`` must fit."""

KNOWN_EVENTS: frozenset[str] = frozenset(EVENT_MODELS)
RESERVED_EVENTS: frozenset[str] = frozenset({"log.created", "log.recovered"})
"""Written only by :class:`audit.log.AuditLog` itself."""

EventData = (
    ApprovalRefusedData
    | ConfirmationDeclinedData
    | ConfirmationRecordedData
    | ConfirmationRequestedData
    | EffectsResolvedData
    | EffectsReviewedData
    | EvidenceConsumedData
    | EvidenceRejectedData
    | GrantCreatedData
    | GrantExpiredData
    | GrantRevokedData
    | GrantUsedData
    | KeyGeneratedData
    | KeyRetiredData
    | KeyRotatedData
    | LogCreatedData
    | LogRecoveredData
    | NetworkRefusedData
    | OperatorEnrolledData
    | OperatorRemovedData
    | PlannerReportedData
    | SessionEndedData
    | SessionStartedData
    | ToolExecutedData
)
"""One typed event: an event's data model, which names its event (:func:`event_of`)."""

_EVENT_OF: MappingProxyType[type[WireModel], str] = MappingProxyType(
    {model: event for event, model in EVENT_MODELS.items()}
)


def event_of(data: EventData) -> tuple[str, dict[str, Any]]:
    """The event a typed event's model stands for, and its data as the camelCase mapping the
    log takes (fields left unset absent, never ``null``): exactly what a caller writing the
    same facts as a mapping passes, so a record's bytes do not depend on the path taken.
    Raises :class:`audit.UnknownEventError` for a model that is no event's (a subclass too)."""
    event = _EVENT_OF.get(type(data))
    if event is None:
        raise UnknownEventError(type(data).__name__)
    fields: dict[str, Any] = data.model_dump(mode="json", exclude_none=True)
    return event, fields
