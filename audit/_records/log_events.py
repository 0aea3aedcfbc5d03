"""The data of the log's own events and of the guard's keys, operators, sessions and
scoped grants (``log.*``, ``key.*``, ``operator.*``, ``session.*``, ``grant.*``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from audit._records.fields import (
    CredentialId,
    LogId,
    OperatorReason,
    PathText,
    Preview,
    RuleIds,
    SessionRef,
    ToolCallId,
    ToolName,
    WireModel,
)
from audit._records.wire import ActionKind, EvidenceId, GrantId, IsoMillis, KeyId, Sha256

__all__ = [
    "FileName",
    "GrantCreatedData",
    "GrantExpiredData",
    "GrantPatternData",
    "GrantRevokedData",
    "GrantUsedData",
    "KeyGeneratedData",
    "KeyRetiredData",
    "KeyRotatedData",
    "LogCreatedData",
    "LogRecoveredData",
    "OperatorEnrolledData",
    "OperatorRemovedData",
    "SessionEndedData",
    "SessionStartedData",
]


class LogCreatedData(WireModel):
    """Record 0 of every log; its log id seeds the genesis ``prev``."""

    log_id: LogId
    schema_: Literal["pi-operator-guard/audit/v1"] = Field(alias="schema")


FileName = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[^/\\]+$")]


class LogRecoveredData(WireModel):
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


class KeyGeneratedData(WireModel):
    key_id: KeyId


class OperatorEnrolledData(WireModel):
    """The operator enrolled an authenticator (``pi-guard operator enroll``): from now on the
    page asks it to sign every yes, and its public key is in the keyring's signed
    ``operators`` list."""

    credential_id: CredentialId
    label: Annotated[str, Field(min_length=1, max_length=100)]
    algorithm: Literal[-7, -8, -257]
    rp_id: Annotated[str, Field(min_length=1, max_length=253)]
    origin: Annotated[str, Field(min_length=1, max_length=300)]


class OperatorRemovedData(WireModel):
    """The operator removed an enrolled authenticator (``pi-guard operator remove``): evidence
    it signed is refused from now on (``operator-credential-removed``)."""

    credential_id: CredentialId
    label: Annotated[str, Field(min_length=1, max_length=100)]


class KeyRotatedData(WireModel):
    old_key_id: KeyId
    new_key_id: KeyId


class KeyRetiredData(WireModel):
    """A key was retired without being rotated: its private key file left the home.

    From ``retired_at_iso`` on it verifies only evidence created before that moment (for
    at most the maximum TTL) and old heads; ``new_key_id`` is the key generated instead.
    """

    key_id: KeyId
    new_key_id: KeyId
    retired_at_iso: IsoMillis
    reason: Literal["key-file-missing"]


class SessionTool(WireModel):
    """One tool a session can reach, as pi said at the start: its name, where it comes from
    (``builtin``, ``guard``, ``extension``, ``sdk``, ``unknown``) and its MCP server."""

    name: Annotated[str, Field(min_length=1, max_length=256)]
    source: Literal["builtin", "guard", "extension", "sdk", "unknown"]
    server: Annotated[str, Field(min_length=1, max_length=128)] | None = None


class SessionStartedData(WireModel):
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
    tools: list[SessionTool] | None = Field(
        default=None,
        max_length=512,
        description="the tools pi said the session can reach when it started (MCP servers' "
        "tools appear as their servers connect, later)",
    )
    session: SessionRef | None = None


class SessionEndedData(WireModel):
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


class GrantPatternData(WireModel):
    """What a grant covers: one plain action (tool, kind, program, the fixed arguments) on
    targets inside ``globs`` and ``scope``, asked about by exactly ``rule_ids``."""

    tool: ToolName
    kind: ActionKind
    program: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    fixed_args: Annotated[list[PathText], Field(max_length=64)]
    globs: Annotated[list[PathText], Field(min_length=1, max_length=64)]
    scope: PathText
    rule_ids: RuleIds


class GrantCreatedData(WireModel):
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


class GrantUsedData(WireModel):
    """A grant covered one more call; ``evidence_id`` is that call's own evidence."""

    grant_id: GrantId
    use: int = Field(ge=1, le=1000)
    evidence_id: EvidenceId
    tool_call_id: ToolCallId | None = None
    preview: Preview | None = None
    session: SessionRef | None = None


class GrantRevokedData(WireModel):
    """The operator revoked a grant (``by``: pi's ``/guard`` command or ``pi-guard grants``)."""

    grant_id: GrantId
    by: Literal["guard-command", "cli"]
    uses: int = Field(ge=0)
    session: SessionRef | None = None


class GrantExpiredData(WireModel):
    """A grant ended by itself: its time or uses ran out, its session ended, the key was
    rotated, the policy changed, or grants were switched off."""

    grant_id: GrantId
    reason: Literal[
        "time", "uses", "session-ended", "key-rotated", "policy-changed", "switched-off"
    ]
    uses: int = Field(ge=0)
    session: SessionRef | None = None
