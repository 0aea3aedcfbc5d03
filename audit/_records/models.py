"""Wire shapes of the audit log: the record line, the signed head and every event's data.

Python attributes are snake_case; the wire (and the log) is camelCase. Fields that
are unknown are absent on the wire, never ``null``.
"""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from audit._records.canonical import canonical_json, sha256_prefixed
from audit._records.wire import (
    WIRE_CONFIG,
    ActionKind,
    EvidenceId,
    GrantId,
    IsoMillis,
    KeyId,
    Origin,
    Sha256,
    Signature,
    parse_iso,
)

__all__ = [
    "EVENT_MODELS",
    "GENESIS_DOMAIN",
    "HEAD_DOMAIN",
    "KNOWN_EVENTS",
    "LOG_SCHEMA",
    "MAX_OPERATOR_REASON_CHARS",
    "RESERVED_EVENTS",
    "ApprovalRefusedData",
    "AuditHead",
    "AuditRecord",
    "ConfirmationDeclinedData",
    "ConfirmationRecordedData",
    "ConfirmationRequestedData",
    "EffectsResolvedData",
    "EffectsReviewedData",
    "EvidenceConsumedData",
    "EvidenceRejectedData",
    "GrantCreatedData",
    "GrantExpiredData",
    "GrantPatternData",
    "GrantRevokedData",
    "GrantUseRef",
    "GrantUsedData",
    "HeldEffectData",
    "KeyGeneratedData",
    "KeyRetiredData",
    "KeyRotatedData",
    "LogCreatedData",
    "LogRecoveredData",
    "NetworkRefusedData",
    "OperatorEnrolledData",
    "OperatorRemovedData",
    "PlannerReportedData",
    "SessionEndedData",
    "SessionRef",
    "SessionStartedData",
    "ToolExecutedData",
    "genesis_hash",
]

LOG_SCHEMA = "pi-operator-guard/audit/v1"
GENESIS_DOMAIN = b"pi-operator-guard/audit-genesis/v1\n"
HEAD_DOMAIN = b"pi-operator-guard/audit-head/v1\n"

# An evidence id taken from a rejected (possibly malformed) envelope: any short text.
AnyEvidenceId = Annotated[str, Field(min_length=1, max_length=256)]
LogId = Annotated[str, Field(pattern=r"^log_[A-Za-z0-9_-]{16,200}$")]
ToolName = Annotated[str, Field(min_length=1, max_length=256)]
ToolCallId = Annotated[str, Field(min_length=1, max_length=256)]
# Fingerprint fields are never truncated; the limit only keeps a line bounded.
PathText = Annotated[str, Field(min_length=1, max_length=16384)]
Preview = Annotated[str, Field(max_length=1024)]
MAX_OPERATOR_REASON_CHARS = 200
"""The longest operator reason a record keeps (after secret redaction, like a preview)."""
OperatorReason = Annotated[str, Field(min_length=1, max_length=MAX_OPERATOR_REASON_CHARS)]
Reason = Annotated[str, Field(min_length=1, max_length=512)]
Reasons = Annotated[list[Reason], Field(max_length=64)]
SpoolId = Annotated[str, Field(pattern=r"^spool_[A-Za-z0-9_-]{16,64}$")]
Approver = Literal["pi-dialog", "cli", "web"]
"""Which screen answered a question: pi's dialog, ``pi-guard approvals``, the page."""


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


def genesis_hash(log_id: str) -> str:
    """The ``prev`` of record 0: ``sha256_prefixed(GENESIS_DOMAIN + log_id)``."""
    return sha256_prefixed(GENESIS_DOMAIN + log_id.encode("utf-8"))


class AuditRecord(_Wire):
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


class AuditHead(_Wire):
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


# -- event data ---------------------------------------------------------------


class LogCreatedData(_Wire):
    """Record 0 of every log; its log id seeds the genesis ``prev``."""

    log_id: LogId
    schema_: Literal["pi-operator-guard/audit/v1"] = Field(alias="schema")


FileName = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[^/\\]+$")]


class LogRecoveredData(_Wire):
    """Bytes were moved aside before this record was appended.

    ``torn-line`` / ``unsigned-tail``: what one crashed append left after the head's
    record (``invalid-line`` only in logs written before the appender verified the head).
    ``operator-recovery``: record 1 of a log started by ``pi-guard audit recover``; the
    damaged log was moved to ``quarantinedTo`` (its head to ``headMovedTo``) and the
    other fields say what it was and why.
    """

    quarantined_to: FileName
    bytes: int = Field(ge=0)
    reason: Literal["torn-line", "invalid-line", "unsigned-tail", "operator-recovery"]
    sha256: Sha256 | None = Field(default=None, description="SHA-256 of the moved log's bytes")
    head_moved_to: FileName | None = None
    previous_log_id: LogId | None = None
    fault: Annotated[str, Field(pattern=r"^[a-z]+(-[a-z]+)*$", max_length=64)] | None = Field(
        default=None, description="The fault verify reported for the moved log"
    )
    line: int | None = Field(default=None, ge=1, description="The line verify reported")
    operator_reason: OperatorReason | None = Field(
        default=None, description="Why the operator recovered (secret-redacted)"
    )


class KeyGeneratedData(_Wire):
    key_id: KeyId


CredentialId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,1366}$")]
"""A WebAuthn credential id, unpadded base64url (at most 1023 bytes, WebAuthn section 5.1)."""


class OperatorEnrolledData(_Wire):
    """The operator enrolled an authenticator (``pi-guard operator enroll``): from now on the
    page asks it to sign every yes, and its public key is in the keyring's signed
    ``operators`` list."""

    credential_id: CredentialId
    label: Annotated[str, Field(min_length=1, max_length=100)]
    algorithm: Literal[-7, -8, -257]
    rp_id: Annotated[str, Field(min_length=1, max_length=253)]
    origin: Annotated[str, Field(min_length=1, max_length=300)]


class OperatorRemovedData(_Wire):
    """The operator removed an enrolled authenticator (``pi-guard operator remove``): evidence
    it signed is refused from now on (``operator-credential-removed``)."""

    credential_id: CredentialId
    label: Annotated[str, Field(min_length=1, max_length=100)]


class KeyRotatedData(_Wire):
    old_key_id: KeyId
    new_key_id: KeyId


class KeyRetiredData(_Wire):
    """A key was retired without being rotated: its private key file left the home.

    From ``retired_at_iso`` on it verifies only evidence created before that moment (for
    at most the maximum TTL) and old heads; ``new_key_id`` is the key generated instead.
    """

    key_id: KeyId
    new_key_id: KeyId
    retired_at_iso: IsoMillis
    reason: Literal["key-file-missing"]


class SessionRef(_Wire):
    """Which pi session a record belongs to: pi's session ``id`` and ``file`` (none for an
    ephemeral session) and the ``guard_pid`` of the sidecar that wrote it. Every record a
    session's sidecar writes carries it; a record delivered late carries the session it
    happened in when the shim kept it."""

    id: Annotated[str, Field(min_length=1, max_length=128)]
    file: PathText | None = None
    guard_pid: int | None = Field(default=None, ge=1)


class ConfirmationRequestedData(_Wire):
    """The guard asked the operator about one exact action."""

    origin: Origin
    action_kind: ActionKind
    tool_name: ToolName
    path: PathText | None = None
    scope: PathText | None = None
    payload_hash: Sha256
    tool_call_id: ToolCallId | None = None
    created_at_iso: IsoMillis
    expires_at_iso: IsoMillis
    key_id: KeyId
    preview: Preview | None = None
    session: SessionRef | None = None


class GrantUseRef(_Wire):
    """Which grant covered a call, and which use of it this was."""

    grant_id: GrantId
    use: int = Field(ge=1, le=1000)


class ConfirmationRecordedData(ConfirmationRequestedData):
    """The operator said yes; evidence ``evidence_id`` was minted for the action.

    ``covered_by``: the yes was a grant's, not a dialog's (origin ``runtime-grant``)."""

    evidence_id: EvidenceId
    covered_by: GrantUseRef | None = None
    approver: Approver | None = None
    operator_credential: CredentialId | None = None
    """The enrolled authenticator whose signature the evidence carries (the page's passkey)."""


RuleIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=128)]], Field(min_length=1, max_length=16)
]


class ConfirmationDeclinedData(_Wire):
    """No evidence was minted for the action, and why."""

    reason: Literal[
        "declined",
        "timeout",
        "no-ui",
        "sidecar-unavailable",
        "blocked-by-policy",
        "confirmed-unrecorded",
        "input-changed-after-decision",
        "sandbox-unavailable",
        "stopped",
    ] = Field(
        description=(
            "``stopped``: the operator answered *No, and stop the agent*: this call and the "
            "rest of the turn were declined. "
            "``confirmed-unrecorded``: the operator said yes but the sidecar died before it "
            "could record evidence; the call was blocked (fail closed). "
            "``sandbox-unavailable``: the OS sandbox could not start, so the agent's command "
            "was not run. A block (``sidecar-unavailable``, ``sandbox-unavailable``) is "
            "recorded for a local-safe call too. "
            "``input-changed-after-decision``: something (a later extension) changed the "
            "call's input after the guard decided; the input here is the one that would "
            "have run, and it did not."
        )
    )
    action_kind: Literal["local-safe", "destructive", "protected"]
    tool_name: ToolName
    path: PathText | None = None
    scope: PathText | None = None
    payload_hash: Sha256
    tool_call_id: ToolCallId | None = None
    preview: Preview | None = None
    rule_ids: RuleIds | None = Field(
        default=None, description="the policy rules behind the decision, when any matched"
    )
    operator_reason: OperatorReason | None = Field(
        default=None,
        description=(
            'What the operator typed when declining ("No, with a reason"): one line, '
            "secret-redacted, at most 200 characters."
        ),
    )
    approver: Approver | None = Field(
        default=None,
        description="which screen answered: pi's dialog, the second terminal, the page",
    )
    delivered_late: Literal[True] | None = Field(
        default=None,
        description=(
            "The shim could not deliver this event when it happened (the sidecar was down) and "
            "kept it in its spool; a later sidecar appended it (``audit.replay``)."
        ),
    )
    spool_id: SpoolId | None = Field(
        default=None, description="the spooled event's unique id (a replay skips ids it logged)"
    )
    occurred_at_iso: IsoMillis | None = Field(
        default=None, description="when the event happened, by the shim's clock (late events)"
    )
    session: SessionRef | None = None


class EvidenceConsumedData(_Wire):
    """A monitor consumer accepted evidence (report-only) and spent it."""

    evidence_id: EvidenceId
    action_kind: ActionKind
    tool_name: ToolName
    path: PathText | None = None
    scope: PathText | None = None
    payload_hash: Sha256
    tool_call_id: ToolCallId | None = None
    session: SessionRef | None = None


class EvidenceRejectedData(_Wire):
    """A monitor consumer rejected evidence (or found none)."""

    evidence_id: AnyEvidenceId | None = None
    decision: Literal[
        "malformed",
        "untrusted",
        "expired",
        "not-yet-valid",
        "mismatch",
        "not-dialog",
        "not-operator-signed",
        "consumed",
        "missing",
    ]
    reasons: Reasons
    action_kind: ActionKind | None = None
    tool_name: ToolName
    path: PathText | None = None
    scope: PathText | None = None
    payload_hash: Sha256 | None = None
    tool_call_id: ToolCallId | None = None
    session: SessionRef | None = None


class ToolExecutedData(_Wire):
    """A tool call ran; ``payload_hash`` is of the input as executed."""

    tool_call_id: ToolCallId
    tool_name: ToolName
    is_error: bool
    action_kind: Literal["local-safe", "destructive", "protected"]
    payload_hash: Sha256
    path: PathText | None = None
    scope: PathText | None = None
    evidence_id: AnyEvidenceId | None = None
    preview: Preview | None = None
    rule_ids: RuleIds | None = Field(
        default=None,
        description=(
            "the policy rules that decided, when any matched: for a local-safe call, the "
            "user's rule that let it run without asking (one that relaxed a built-in rule)"
        ),
    )
    delivered_late: Literal[True] | None = Field(
        default=None,
        description=(
            "The shim could not deliver this event when it happened (the sidecar was down) and "
            "kept it in its spool; a later sidecar appended it (``audit.replay``)."
        ),
    )
    spool_id: SpoolId | None = Field(
        default=None, description="the spooled event's unique id (a replay skips ids it logged)"
    )
    occurred_at_iso: IsoMillis | None = Field(
        default=None, description="when the event happened, by the shim's clock (late events)"
    )
    session: SessionRef | None = None


class PlannerReportedData(_Wire):
    """A read-only planner reported a decision (report-only)."""

    planner: str = Field(min_length=1, max_length=128)
    decision: str = Field(min_length=1, max_length=128)
    reasons: Reasons
    session: SessionRef | None = None


class SessionStartedData(_Wire):
    """A guard sidecar took over a pi session: how the agent's shell commands run in it.

    ``sandbox`` is the session's state: ``sandboxed`` (every agent command runs in the OS
    sandbox), ``unsandboxed`` (the user's policy opted out) or ``unavailable`` (the sandbox
    cannot start, so the agent's bash is blocked). Written at session start and again when a
    replacement sidecar takes over the session after a crash (``sidecarRestarted``).
    """

    sandbox: Literal["sandboxed", "unsandboxed", "unavailable"]
    reason: Annotated[str, Field(min_length=1, max_length=64)] | None = Field(
        default=None, description="why not sandboxed: the sandbox's reason code"
    )
    message: Annotated[str, Field(min_length=1, max_length=1024)] | None = None
    scope: PathText = Field(description="the session's workspace (symlinks resolved)")
    pi_version: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    sidecar_restarted: bool = False
    mode: Literal["tui", "rpc", "json", "print"] | None = Field(
        default=None, description="how pi runs: the terminal UI, RPC, JSON events or print"
    )
    network: Literal["open", "off", "allowlist"] | None = Field(
        default=None, description="the agent's commands' network mode (sandboxed sessions)"
    )
    policy_digest: Sha256 | None = Field(
        default=None, description="SHA-256 of the effective policy (rules and settings, JCS)"
    )
    session: SessionRef | None = None


LayerId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")]
EffectCounts = Annotated[dict[str, Annotated[int, Field(ge=0)]], Field(max_length=8)]


class HeldEffectData(_Wire):
    """One effect held for the operator: a path relative to the scope, what happened to it
    and why it waits (``untracked``, ``uncommitted``, ``not-in-git``, ``repository``,
    ``protected``, ``beyond-approval``)."""

    path: PathText
    kind: Literal["created", "modified", "deleted", "replaced", "mode-changed"]
    reason: Literal[
        "untracked",
        "uncommitted",
        "not-in-git",
        "repository",
        "protected",
        "beyond-approval",
        "conflict",
    ]
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)


class EffectsReviewedData(_Wire):
    """What one agent command did to the workspace, read from its copy-on-write layer.

    ``applied``: every effect is in the workspace; ``held``: what loses work waits for the
    operator (``held``; at most 64 listed, ``heldTotal`` counts them all), the rest is
    applied; ``empty``: the command changed nothing. ``digest`` is over the whole effect list.
    """

    layer: LayerId
    scope: PathText
    tool_call_id: ToolCallId | None = None
    decision: Literal["empty", "applied", "held"]
    digest: Sha256 | None = None
    counts: EffectCounts = Field(default_factory=dict)
    held: Annotated[list[HeldEffectData], Field(max_length=64)] = Field(default_factory=list)
    held_total: int = Field(default=0, ge=0)
    session: SessionRef | None = None


class EffectsResolvedData(_Wire):
    """The operator's answer about held effects: ``applied`` (with the evidence minted for
    it) or ``discarded`` (``reason``: declined, timeout, no-ui, sidecar-restart)."""

    layer: LayerId
    decision: Literal["applied", "discarded"]
    digest: Sha256
    tool_call_id: ToolCallId | None = None
    evidence_id: EvidenceId | None = None
    reason: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    approver: Approver | None = None
    session: SessionRef | None = None


class ApprovalRefusedData(_Wire):
    """An answer to a pending question was refused: it named a question that is not open
    (``unknown-id``), not what it was shown (``stale``), came after the first answer
    (``already-answered``), after the deadline (``expired``) or after the question was
    withdrawn (``withdrawn``); or the caller was not the operator: another user on the socket
    (``other-user``), on the page no session or a wrong login token (``no-session``,
    ``bad-login``, ``login-locked`` after too many), another ``Host`` (DNS rebinding) or
    ``Origin`` (a cross-site request), or no CSRF token (``bad-host``, ``bad-origin``,
    ``bad-csrf``); or a passkey answer whose signature did not verify (an ``operator-…``
    reason, as the consumer names it), or asked for one with no authenticator enrolled
    (``no-operator``)."""

    reason: Literal[
        "unknown-id",
        "stale",
        "already-answered",
        "expired",
        "withdrawn",
        "other-user",
        "no-session",
        "bad-login",
        "login-locked",
        "bad-host",
        "bad-origin",
        "bad-csrf",
        "no-operator",
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
    approver: Approver
    approval_id: Annotated[str, Field(max_length=64)] | None = None
    session: SessionRef | None = None


class NetworkRefusedData(_Wire):
    """The sandbox's network allowlist refused a request of an agent command.

    ``reason``: ``not-allowed`` (no allow entry names the host and port),
    ``host-address`` (it resolved to loopback, link-local or another address of this host),
    ``private-address`` (a non-global address an IP literal entry does not name),
    ``unresolved`` (no address could be dialled), ``bad-request`` (not a proxy request).
    Each distinct refusal is recorded once per session.
    """

    host: Annotated[str, Field(min_length=1, max_length=253)]
    port: int = Field(ge=0, le=65535)
    reason: Literal["not-allowed", "host-address", "private-address", "unresolved", "bad-request"]
    scope: PathText
    session: SessionRef | None = None


class SessionEndedData(_Wire):
    """A session's sidecar stopped serving it (``reason``: pi shut down, or switched to
    another session) and what happened in it: dialogs ``asked``, ``confirmed`` and
    ``declined`` by the operator, calls ``blocked`` by the guard, calls ``executed``."""

    reason: Literal["shutdown", "switched"]
    asked: int = Field(ge=0)
    confirmed: int = Field(ge=0)
    declined: int = Field(ge=0)
    blocked: int = Field(ge=0)
    executed: int = Field(ge=0)
    covered: int = Field(default=0, ge=0, description="calls a grant covered: no dialog")
    session: SessionRef | None = None


class GrantPatternData(_Wire):
    """What a grant covers: one plain action (tool, kind, program, the fixed arguments) on
    targets inside ``globs`` and ``scope``, asked about by exactly ``rule_ids``."""

    tool: ToolName
    kind: ActionKind
    program: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    fixed_args: Annotated[list[PathText], Field(max_length=64)]
    globs: Annotated[list[PathText], Field(min_length=1, max_length=64)]
    scope: PathText
    rule_ids: RuleIds


class GrantCreatedData(_Wire):
    """The operator answered a dialog with a grant: later calls inside ``pattern`` in the
    same pi session run without a dialog until ``expires_at_iso`` or ``max_uses``.
    ``evidence_id`` is the evidence of that dialog's call; ``record_hash`` is the SHA-256
    of the signed grant line kept in the home's grants file."""

    grant_id: GrantId
    pattern: GrantPatternData
    breadth: Literal["same-call", "same-directory"]
    label: Preview
    created_at_iso: IsoMillis
    expires_at_iso: IsoMillis
    max_uses: int = Field(ge=1, le=1000)
    evidence_id: EvidenceId
    policy_digest: Sha256
    key_id: KeyId
    record_hash: Sha256
    session: SessionRef | None = None


class GrantUsedData(_Wire):
    """A grant covered one more call; ``evidence_id`` is that call's own evidence."""

    grant_id: GrantId
    use: int = Field(ge=1, le=1000)
    evidence_id: EvidenceId
    tool_call_id: ToolCallId | None = None
    preview: Preview | None = None
    session: SessionRef | None = None


class GrantRevokedData(_Wire):
    """The operator revoked a grant (``by``: pi's ``/guard`` command or ``pi-guard grants``)."""

    grant_id: GrantId
    by: Literal["guard-command", "cli"]
    uses: int = Field(ge=0)
    session: SessionRef | None = None


class GrantExpiredData(_Wire):
    """A grant ended by itself: its time or uses ran out, its session ended, the key was
    rotated, the policy changed, or grants were switched off."""

    grant_id: GrantId
    reason: Literal[
        "time", "uses", "session-ended", "key-rotated", "policy-changed", "switched-off"
    ]
    uses: int = Field(ge=0)
    session: SessionRef | None = None


EVENT_MODELS: MappingProxyType[str, type[_Wire]] = MappingProxyType(
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
"""Written only by :class:`audit.AuditLog` itself."""
