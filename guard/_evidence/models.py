"""Wire shapes of evidence and of every result the guard returns.

All results are report-only. ``dispatch_allowed``, ``can_override_monitor_block``
and ``authorization`` are typed ``Literal[False]`` / ``Literal["none"]``: no code
path can construct a result that claims to authorize anything.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from audit.wire import (
    WIRE_CONFIG,
    ActionKind,
    Approver,
    EvidenceId,
    GrantId,
    IsoMillis,
    KeyId,
    Origin,
    Sha256,
    Signature,
)
from guard._evidence.fingerprint import MAX_PATH_CHARS, MAX_TOOL_NAME_CHARS, Fingerprint
from guard._operator import OperatorSignature

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "EVIDENCE_CUSTOM_TYPE",
    "EVIDENCE_SCHEMA",
    "MAX_GRANT_USES",
    "MAX_TTL_SECONDS",
    "ConsumeResult",
    "CoveredBy",
    "Evaluation",
    "EvidenceDetails",
    "EvidenceEnvelope",
    "MatchDecision",
    "MatchResult",
    "OperatorSigned",
    "RecordResult",
    "ReportOnly",
]

EVIDENCE_SCHEMA = "pi-operator-guard/evidence/v1"
EVIDENCE_CUSTOM_TYPE: Literal["operator-confirmation-evidence"] = "operator-confirmation-evidence"
DEFAULT_TTL_SECONDS = 30
MAX_TTL_SECONDS = 600


def _json_boolean(value: object) -> object:
    # pydantic compares a literal by equality, and 1 == True, 0 == False, 1.0 == True in
    # Python: without this, ``"trusted": 1`` or ``"dispatchAllowed": 0`` would pass as the
    # literal (the independent TypeScript verifier refuses them; tests/vectors/evidence/).
    if type(value) is not bool:
        raise ValueError("must be a JSON boolean (true or false), not a number")
    return value


def _without_default(schema: dict[str, Any]) -> None:
    # A field that is absent or set, never null: its schema states no (null) default.
    schema.pop("default", None)


ExactTrue = Annotated[Literal[True], BeforeValidator(_json_boolean)]
ExactFalse = Annotated[Literal[False], BeforeValidator(_json_boolean)]

MAX_GRANT_USES = 1000
"""The highest ``coveredBy.use`` an envelope may carry."""

MatchDecision = Literal[
    "match",
    "missing",
    "malformed",
    "untrusted",
    "expired",
    "not-yet-valid",
    "mismatch",
    "not-dialog",
    "not-operator-signed",
    "consumed",
]
OperatorSigned = Literal["verified", "none"]
"""Whether evidence carries the operator's own verified signature (``none``: pi's dialog,
the second terminal, a grant, or a page without an enrolled passkey)."""


class ReportOnly(BaseModel):
    """The three flags every result carries; they can only ever say "no"."""

    model_config = WIRE_CONFIG

    dispatch_allowed: ExactFalse = False
    can_override_monitor_block: ExactFalse = False
    authorization: Literal["none"] = "none"


class CoveredBy(BaseModel):
    """Which scoped grant covered a call that ran without a dialog of its own (signed).

    Present exactly when ``origin`` is ``runtime-grant``. See
    docs/monitor.md, "The envelope (v1)".
    """

    model_config = WIRE_CONFIG

    grant_id: GrantId
    use: int = Field(ge=1, le=MAX_GRANT_USES)  # strict: true and 1.0 are not integers
    """Which use of the grant this call is: 1 for the first call it covered."""
    grant_evidence_id: EvidenceId
    """The evidence of the dialog in which the operator gave the grant."""


class EvidenceDetails(ReportOnly):
    """The signed part of an envelope.

    See docs/monitor.md, "The envelope (v1)".
    """

    schema_: Literal["pi-operator-guard/evidence/v1"] = Field(alias="schema")
    evidence_id: EvidenceId
    origin: Origin
    trusted: ExactTrue
    action_kind: ActionKind
    tool_name: str = Field(min_length=1, max_length=MAX_TOOL_NAME_CHARS)
    path: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    scope: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    payload_hash: Sha256
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)
    covered_by: CoveredBy | None = None
    # Absent, never null (the validator below): so the schema lists only the three values.
    approver: Approver | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=_without_default
    )
    """Which screen the operator answered on: pi's dialog, ``pi-guard approvals``, the page.

    Absent when not known (evidence minted before the field, or by a path that names no
    screen); never ``null`` on the wire.
    """
    operator_signature: OperatorSignature | SkipJsonSchema[None] = Field(
        default=None, json_schema_extra=_without_default
    )
    """The operator's own WebAuthn assertion over this envelope's approval statement
    (docs/monitor.md, "The operator's signature"); absent when the yes came without one, never
    ``null``.
    """
    created_at_iso: IsoMillis
    expires_at_iso: IsoMillis
    key_id: KeyId
    signature: Signature

    @field_validator("approver", "operator_signature", mode="before")
    @classmethod
    def _absent_not_null(cls, value: object) -> object:
        # New fields, so no envelope ever carried them as null; an explicit null is refused
        # (the TypeScript verifier refuses it too) rather than read as absent.
        if value is None:
            raise ValueError("absent or set, never null")
        return value

    @model_validator(mode="after")
    def _grant_origin(self) -> EvidenceDetails:
        # Either both say "a grant covered this call" or neither does: an envelope cannot
        # claim a dialog while naming a grant, nor a grant without naming it.
        if (self.origin == "runtime-grant") != (self.covered_by is not None):
            raise ValueError("origin runtime-grant needs coveredBy, and coveredBy needs it")
        return self

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Optional fields are absent, never null, on the wire: the signature covers
        # the exact details object, so there must be one way to write "no path".
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    def fingerprint(self) -> Fingerprint:
        return Fingerprint(
            action_kind=self.action_kind,
            tool_name=self.tool_name,
            path=self.path,
            scope=self.scope,
            payload_hash=self.payload_hash,
        )


class EvidenceEnvelope(BaseModel):
    """pi's custom-entry shape, so it can be stored with ``pi.appendEntry``."""

    model_config = WIRE_CONFIG

    custom_type: Literal["operator-confirmation-evidence"] = EVIDENCE_CUSTOM_TYPE
    content: str = Field(max_length=2048)
    display: ExactFalse = False
    details: EvidenceDetails


class Evaluation(ReportOnly):
    """What the guard thinks of a pending call, before anyone is asked."""

    verdict: Literal["allow", "confirm", "block"]
    action_kind: Literal["local-safe", "destructive", "protected"]
    requires_confirmation: bool
    fingerprint: Fingerprint | None = None
    reasons: tuple[str, ...] = ()
    rule_ids: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    config_problems: tuple[str, ...] = ()
    preview: str = ""
    summary: str


class RecordResult(ReportOnly):
    """Outcome of recording an operator's answer."""

    decision: Literal["recorded", "declined", "invalid"]
    reasons: tuple[str, ...] = ()
    evidence_id: str | None = None
    expires_at_iso: str | None = None
    envelope: EvidenceEnvelope | None = None
    fingerprint: Fingerprint | None = None
    operator_signature: OperatorSigned | None = None
    """With ``recorded``: whether the evidence carries the operator's own signature."""
    summary: str


class MatchResult(BaseModel):
    model_config = WIRE_CONFIG

    decision: MatchDecision
    reasons: tuple[str, ...] = ()


class ConsumeResult(ReportOnly):
    """Outcome of the monitor consumer's check.

    See docs/monitor.md, "The consumer's checks and reason codes".
    """

    decision: Literal["consumed", "rejected"]
    match: MatchResult
    reasons: tuple[str, ...] = ()
    evidence_id: str | None = None
    operator_signature: OperatorSigned | None = None
    """With ``consumed``: ``verified`` when the envelope carried the operator's own signature
    and it verified, ``none`` when it carried none."""
    summary: str
