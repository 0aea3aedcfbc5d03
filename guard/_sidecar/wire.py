"""The sidecar's params and replies: the wire shapes (``describe`` serves their JSON Schemas).

Names are camelCase on the wire (the shared wire config); every params model rejects
unknown members, so a typo in the shim is an error, not a silently ignored field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from audit.wire import WIRE_CONFIG
from guard._approvals import Answer
from guard._evidence import DEFAULT_TTL_SECONDS, Evaluation, RecordResult
from guard._facade import CallParams, DeclineReason, OperatorReasonText
from guard._pi import PlannerTool
from guard._policy import ToolFacts
from guard._sandbox import SandboxPlan

__all__ = [
    "ApprovalAnswerParams",
    "ApprovalAnswered",
    "ApprovalRef",
    "CallParams",
    "ConsumeParams",
    "DeclinedParams",
    "DeclinedReply",
    "Dialog",
    "DialogChoices",
    "EvaluateParams",
    "EvaluateReply",
    "GrantNote",
    "GrantsRevokeParams",
    "HealthReply",
    "NoParams",
    "ParentCall",
    "PlanParams",
    "PlannerTool",
    "RecordParams",
    "RecordReply",
    "ReplayParams",
    "RuntimeFacts",
    "SandboxPlanParams",
    "SandboxPlanReply",
    "StatusParams",
    "ToolExecutedParams",
    "VerifyParams",
]


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class NoParams(_Wire):
    """Methods that take no parameters accept ``{}`` or no ``params`` at all."""


class ParentCall(_Wire):
    """The call that made this one (a ``codemode`` script's nested call: pi's
    ``parentToolCallId``), with its input as pi gave it, for the dialog to show the part
    of the script that makes this call."""

    tool_call_id: str = Field(min_length=1, max_length=256)
    tool_name: str = Field(min_length=1, max_length=256)
    input: dict[str, Any] | None = None


class EvaluateParams(CallParams):
    """``tool``: what pi says of the tool (``pi.getAllTools()``), remembered for the session;
    ``parent``: the call that made this one, when another tool made it."""

    has_ui: bool = True
    confirm_timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000)
    ttl_seconds: int = Field(default=DEFAULT_TTL_SECONDS, ge=1, le=600)
    tool: ToolFacts | None = None
    parent: ParentCall | None = None

    @model_validator(mode="after")
    def _facts_of_this_tool(self) -> EvaluateParams:
        if self.tool is not None and self.tool.name != self.tool_name:
            raise ValueError("'tool' describes another tool than 'toolName'")
        return self


ApprovalIdText = Annotated[str, Field(pattern=r"^apr_[A-Za-z0-9_-]{16,32}$")]


class ApprovalRef(_Wire):
    """The question every screen shows for this call: answer it by ``id`` and ``digest``."""

    id: str
    digest: str


class RecordParams(CallParams):
    """``grant``: the operator chose the dialog's grant number ``grant`` (0 or 1) besides
    this call; the sidecar derives the offers again, it never takes a pattern from the shim.
    ``approvalId``: the question this answers; a yes needs that question's winning answer
    to be yes (from whichever screen), and the record names its approver."""

    confirmed: bool
    grant: int | None = Field(default=None, ge=0, le=1)
    approval_id: ApprovalIdText | None = None
    ttl_seconds: int = DEFAULT_TTL_SECONDS
    decline_reason: DeclineReason = "declined"
    operator_reason: OperatorReasonText | None = None


class DeclinedParams(CallParams):
    reason: DeclineReason | Literal["input-changed-after-decision", "sandbox-unavailable"]
    approval_id: ApprovalIdText | None = None
    confirm_timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000)
    operator_reason: OperatorReasonText | None = None


class ConsumeParams(CallParams):
    """Give the envelope itself, or the pi session file to take it from.

    With ``sessionFile``, the envelope is the last ``operator-confirmation-evidence`` custom
    entry whose ``details.toolCallId`` equals ``toolCallId`` (or the last one at all when no
    ``toolCallId`` is given); none found is the ``missing`` decision. A given ``toolCallId``
    is also compared with the evidence's signed one: another call's evidence is rejected
    (``tool-call-id-mismatch``); without one, evidence bound to a call is rejected
    (``call-id-required``) unless ``callCheckedElsewhere`` says the consumer ties it to the
    call some other way. ``requireDialog``: evidence a scoped grant covered
    (``origin: runtime-grant``) is rejected (``not-dialog`` / ``grant-covered``) and not
    consumed. ``requireOperatorSignature`` (or the home's ``[evidence]`` policy): evidence
    without the operator's own signature is rejected (``not-operator-signed``), not consumed.
    """

    envelope: dict[str, Any] | str | None = None
    session_file: str | None = Field(default=None, min_length=1, max_length=4096)
    call_checked_elsewhere: bool = False
    require_dialog: bool = False
    require_operator_signature: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> ConsumeParams:
        if (self.envelope is None) == (self.session_file is None):
            raise ValueError("give exactly one of envelope and sessionFile")
        return self


class ToolExecutedParams(CallParams):
    tool_call_id: str = Field(min_length=1, max_length=256)
    is_error: bool
    evidence_id: str | None = Field(default=None, min_length=1, max_length=128)


# -- audit.replay: events the shim kept in its spool while no sidecar could take them --------

MAX_REPLAY_EVENTS = 1000


class ReplayParams(_Wire):
    """``events``: the spool's lines as the shim read them; each is validated on its own
    (:data:`guard._facade.SpooledEvent`), so one bad line does not hold back the others."""

    events: list[Any] = Field(max_length=MAX_REPLAY_EVENTS)


class RuntimeFacts(_Wire):
    """What the pi runtime knows about itself when the model calls a planner tool.

    ``hasUi``: this session can show the guard's dialog (``ctx.hasUI``);
    ``appendEntry``: the extension can store structured session entries (``pi.appendEntry``).
    """

    has_ui: bool
    append_entry: bool


class StatusParams(_Wire):
    """``status`` (``/guard``): ``tools``, what pi says of every tool the session can reach
    now, to list how the guard judges each (remembered like ``evaluate``'s)."""

    tools: list[ToolFacts] = Field(default_factory=list, max_length=512)


class PlanParams(_Wire):
    """``runtime``: set by the shim for the planner tool; the planner input fields these facts
    decide are filled in from them unless ``params`` sets them (see ``guard._sidecar.runtime``).
    """

    planner: str = Field(default="channel", min_length=1, max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)
    runtime: RuntimeFacts | None = None


AbsolutePath = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^/[^\x00]*$")]


class SandboxPlanParams(_Wire):
    """``sandbox.plan``: the session's workspace and what the shim knows about pi.

    ``extraReadOnly``: paths the shim adds to what the sandbox keeps read-only (its own
    directory, pi's package, the node running pi), so they stay read-only even when they lie
    in the workspace. ``sidecarRestarted``: a replacement sidecar takes over the session.
    ``envNames``: the names (never the values) of pi's environment, so credentials in it
    are removed from the agent's commands. ``piDir``, ``nodePath``: pi's package and the
    node running it, which the agent's file tools may never write. ``sessionId``,
    ``sessionFile``, ``mode``: pi's session (every record this sidecar writes names it from
    now on; another id ends the previous one) and how pi runs. ``tools``: the tools pi says
    the session can reach (remembered for judging their calls, listed in ``session.started``).
    """

    cwd: str = Field(min_length=1, max_length=4096)
    shell: AbsolutePath = "/bin/bash"
    extra_read_only: list[AbsolutePath] = Field(default_factory=list, max_length=16)
    pi_version: str | None = Field(default=None, min_length=1, max_length=64)
    sidecar_restarted: bool = False
    env_names: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=4096
    )
    pi_dir: AbsolutePath | None = None
    node_path: AbsolutePath | None = None
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    session_file: str | None = Field(default=None, min_length=1, max_length=4096)
    # Any text: a mode a newer pi adds must not cost the session its sandbox plan (the
    # audit records only the modes it knows).
    mode: str | None = Field(default=None, max_length=32)
    tools: list[ToolFacts] = Field(default_factory=list, max_length=512)
    """What pi says of every tool the session can reach now (``pi.getAllTools()``)."""


class SandboxPlanReply(SandboxPlan):
    """The session's :class:`~guard._sandbox.SandboxPlan` plus what the shim shows.

    ``notice``: said once at session start (``None``: nothing to say); ``blockReason``: the
    tool result of every agent ``bash`` call while the sandbox is ``unavailable``;
    ``audited``: ``session.started`` was appended to the audit log.
    """

    notice: str | None = None
    notice_level: Literal["warning", "error"] = "warning"
    block_reason: str | None = None
    audited: bool = False


class VerifyParams(_Wire):
    allow_unanchored: bool = False


class DialogChoices(_Wire):
    """The dialog's choices, shown in this order; the first (``no``) is highlighted:
    ``no``, ``noWithReason``, ``stop`` (ends the turn), ``yes`` (this call once), each of
    ``grants`` (this call, and later ones inside the grant), ``details`` (shows
    :attr:`Dialog.details`, then asks again)."""

    no: str
    no_with_reason: str
    stop: str
    yes: str
    grants: list[str] = Field(default_factory=list, max_length=2)
    details: str


class Dialog(_Wire):
    """What the shim shows with ``ctx.ui.select``: it names the exact action.

    ``title`` and ``message`` are shown together above the choices; after ``noWithReason``
    the shim asks ``reasonTitle`` with ``ctx.ui.input`` (``reasonPlaceholder`` as its hint).
    """

    title: str
    message: str
    details: str
    choices: DialogChoices
    reason_title: str
    reason_placeholder: str


LayerText = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")]


class EffectsReviewParams(_Wire):
    """``effects.review``: a command of the agent ended; read what it did from its layer.

    ``command``: the agent's command as it asked for it (what the dialog shows and the
    evidence binds); ``outputTail``: the end of its output so far, for the dialog.
    """

    layer: LayerText
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)
    cwd: str = Field(min_length=1, max_length=4096)
    command: str = Field(max_length=1 << 19)
    output_tail: str = Field(default="", max_length=8192)
    has_ui: bool = True
    confirm_timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000)


class EffectsDialog(_Wire):
    """The held effects, for ``ctx.ui.select``: the ``preselect`` choice first (Enter alone
    takes it). ``discard`` wherever applying would lose work or change a place whose content
    runs (``.pi``, ``.git``); ``apply`` for what only creates files. No answer discards."""

    title: str
    message: str
    discard: str
    apply: str
    preselect: Literal["discard", "apply"] = "discard"


class EffectsReviewReply(_Wire):
    """``applied``/``empty``: nothing to ask; ``held``: show ``dialog``, then
    ``effects.resolve``. ``note``: lines for the command's output (the model reads them:
    what was held, or why a path failed in the sandbox); ``hint``: for the operator only
    (a notice), the setting that would widen such a path."""

    decision: Literal["empty", "applied", "held", "discarded"]
    summary: str
    note: str | None = None
    dialog: EffectsDialog | None = None
    hint: str | None = None
    approval: ApprovalRef | None = None
    """``held``: the same question on every screen (apply is yes, discard is no)."""


class EffectsResolveParams(_Wire):
    """``effects.resolve``: the operator's answer about a layer's held effects."""

    layer: LayerText
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=256)
    cwd: str = Field(min_length=1, max_length=4096)
    command: str = Field(max_length=1 << 19)
    apply: bool
    reason: Literal["declined", "timeout", "no-ui"] | None = None
    approval_id: ApprovalIdText | None = None


class EffectsResolveReply(_Wire):
    decision: Literal["applied", "discarded"]
    note: str
    evidence_id: str | None = None
    envelope: dict[str, Any] | None = None


class JudgedFile(_Wire):
    """The file a ``read``/``write``/``edit`` call opens: ``path`` as pi resolves it, and the
    ``real`` file it led to when the guard decided. The shim refuses to read or write
    through ``path`` when the file it opens is another (``path-changed-after-decision``)."""

    path: str
    real: str


class ApprovalAnswered(_Wire):
    """``approvals.answered``, a notification (no id) on the sidecar's stdout: another screen
    (a second terminal, the page) answered question ``id`` first, and ``answer`` won. The
    shim closes its dialog; what it may then do is settled from the broker by ``id``
    (``record`` refuses a yes no screen gave)."""

    id: str
    answer: Answer


class ApprovalAnswerParams(_Wire):
    """pi's dialog answered: the first valid answer from any screen wins."""

    id: ApprovalIdText
    digest: str = Field(max_length=80)
    decision: Literal["yes", "no"]
    reason: Annotated[str, Field(max_length=4096)] | None = None
    grant: int | None = Field(default=None, ge=0, le=1)


class GrantNote(_Wire):
    """A grant as the operator sees it: ``use`` of ``maxUses`` (a covered call's)."""

    grant_id: str
    label: str
    expires_at_iso: str
    max_uses: int
    use: int | None = None
    uses: int | None = None


class RecordReply(RecordResult):
    """``record``: the result, and the grant the operator chose besides, if any."""

    grant: GrantNote | None = None


class GrantsRevokeParams(_Wire):
    """``grants.revoke``: one grant by id, or every active grant of the session (``all``)."""

    grant_id: Annotated[str, Field(max_length=64)] | None = None
    all: bool = False

    @model_validator(mode="after")
    def _one(self) -> GrantsRevokeParams:
        if (self.grant_id is None) == (not self.all):
            raise ValueError("give grantId or all, not both")
        return self


class EvaluateReply(_Wire):
    """``evaluate`` for the shim: the evaluation plus what to do with the call.

    ``action``: ``allow`` (let it run, ask nobody; when a grant ``covered`` it, ``record``
    holds the call's own evidence for the session file), ``wait`` (no UI, but the user's
    policy waits for another screen's answer to ``approval``: ``waitNotice`` goes to stderr),
    ``confirm`` (show ``dialog``) or
    ``block`` (return ``blockReason`` to pi; already audited when ``audited``).
    ``sandbox``: a new plan for the session's shell commands, when what it depends on in
    the workspace changed (a repository the agent created): the shim uses it from now on.
    ``file``: for pi's ``read``, ``write`` and ``edit``, the file this decision is about.
    """

    evaluation: Evaluation
    action: Literal["allow", "confirm", "block", "wait"]
    covered: GrantNote | None = None
    record: RecordResult | None = None
    dialog: Dialog | None = None
    approval: ApprovalRef | None = None
    wait_notice: str | None = None
    block_reason: str | None = None
    audited: bool = False
    sandbox: SandboxPlanReply | None = None
    file: JudgedFile | None = None


class DeclinedReply(_Wire):
    record: RecordResult
    block_reason: str


class HealthReply(_Wire):
    """``health``: whether the guard can record (``ok``) and the footer's line."""

    ok: bool
    pid: int
    uptime_seconds: float
    requests: int
    verify_only: bool
    home: str
    key_id: str | None
    error: str | None
    status_text: str
