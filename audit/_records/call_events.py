"""The data of the events about one tool call: asked, confirmed, declined, its evidence
consumed or rejected, executed; planners' reports, held effects, refused approvals and
network requests."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from audit._records.fields import (
    AnyEvidenceId,
    Approver,
    CredentialId,
    OperatorReason,
    PathText,
    Preview,
    Reasons,
    RuleIds,
    SessionRef,
    SpoolId,
    ToolCallId,
    ToolName,
    WireModel,
)
from audit._records.wire import ActionKind, EvidenceId, GrantId, IsoMillis, KeyId, Origin, Sha256

__all__ = [
    "ApprovalRefusedData",
    "ConfirmationDeclinedData",
    "ConfirmationRecordedData",
    "ConfirmationRequestedData",
    "EffectCounts",
    "EffectsResolvedData",
    "EffectsReviewedData",
    "EvidenceConsumedData",
    "EvidenceRejectedData",
    "GrantUseRef",
    "HeldEffectData",
    "LayerId",
    "NetworkRefusedData",
    "PlannerReportedData",
    "ToolExecutedData",
    "UnaskedTargetData",
]


class ConfirmationRequestedData(WireModel):
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


class GrantUseRef(WireModel):
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


class ConfirmationDeclinedData(WireModel):
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


class EvidenceConsumedData(WireModel):
    """A monitor consumer accepted evidence (report-only) and spent it."""

    evidence_id: EvidenceId
    action_kind: ActionKind
    tool_name: ToolName
    path: PathText | None = None
    scope: PathText | None = None
    payload_hash: Sha256
    tool_call_id: ToolCallId | None = None
    session: SessionRef | None = None


class EvidenceRejectedData(WireModel):
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


class UnaskedTargetData(WireModel):
    """One target of a destructive call that ran without a dialog, and why it could: the
    operator's baseline can restore or rebuild it."""

    path: PathText
    reason: Literal["missing", "regenerable", "ignored", "clean", "empty-only"] = Field(
        description=(
            "missing: not there; regenerable: a place tools make again (caches, dependency "
            "folders); ignored: git ignored it by the operator's rules; clean: tracked with "
            "the content of the operator's HEAD; empty-only: a directory only rmdir names "
            "(it removes an empty one or fails)"
        )
    )


class ToolExecutedData(WireModel):
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
    ran_unasked: list[UnaskedTargetData] | None = Field(
        default=None,
        max_length=64,
        description=(
            "a destructive call that ran without a dialog because every target could be "
            "restored or rebuilt against the operator's baseline (the effects review checked "
            "what it did): each target and why; never a gap, never a confirmation"
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


class PlannerReportedData(WireModel):
    """A read-only planner reported a decision (report-only)."""

    planner: str = Field(min_length=1, max_length=128)
    decision: str = Field(min_length=1, max_length=128)
    reasons: Reasons
    session: SessionRef | None = None


LayerId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")]
EffectCounts = Annotated[dict[str, Annotated[int, Field(ge=0)]], Field(max_length=8)]


class HeldEffectData(WireModel):
    """One effect held for the operator: a path relative to the scope, what happened to it
    and why it waits (``untracked``, ``uncommitted``, ``not-in-git``, ``repository``,
    ``protected``, ``beyond-approval``, ``conflict``, ``unexamined``: more files than the
    review looks at one by one, ``mode``: setuid/setgid or world-write added, or the owner's
    access taken away)."""

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
        "unexamined",
        "mode",
    ]
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)


class EffectsReviewedData(WireModel):
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


class EffectsResolvedData(WireModel):
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


class ApprovalRefusedData(WireModel):
    """An answer to a pending question was refused: it named a question that is not open
    (``unknown-id``), not what it was shown (``stale``), came after the first answer
    (``already-answered``), after the deadline (``expired``) or after the question was
    withdrawn (``withdrawn``); or the caller was not the operator: another user on the socket
    (``other-user``) or a process in another pid or user namespace, as every command of the
    agent's sandbox is (``sandboxed-peer``; on the page: a request from a process inside a
    bubblewrap sandbox, whatever it was refused for, never counted against the login
    lock-out; ``unknown-peer`` when the page found no process at the other end, not counted
    either), on the page no session or a wrong login token
    (``no-session``, ``bad-login``; ``login-locked-out`` for the wrong token that locks logins,
    ``login-locked`` for each try after it), another ``Host`` (DNS
    rebinding) or ``Origin`` (a cross-site request), or no CSRF token (``bad-host``, ``bad-origin``,
    ``bad-csrf``); or a passkey answer whose signature did not verify (an ``operator-…``
    reason, as the consumer names it), or asked for one with no authenticator enrolled
    (``no-operator``). ``count``: a record stands for that many refusals of one kind heard
    between two calls of the agent (a flood is a few records, never thousands)."""

    reason: Literal[
        "unknown-id",
        "stale",
        "already-answered",
        "expired",
        "withdrawn",
        "other-user",
        "sandboxed-peer",
        "unknown-peer",
        "no-session",
        "bad-login",
        "login-locked-out",
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
    count: int | None = Field(
        default=None, ge=2, description="how many such refusals this record stands for"
    )
    session: SessionRef | None = None


class NetworkRefusedData(WireModel):
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
