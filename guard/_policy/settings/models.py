"""Wire shapes of the policy engine: verdicts, config problems, rules and the policy description.

Every model is strict, frozen and camelCase on the wire; Python attributes are snake_case.
Config files (TOML) are validated by name, so their keys are snake_case too.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from audit.wire import WIRE_CONFIG

__all__ = [
    "ApprovalSettings",
    "ConfigFile",
    "ConfigProblem",
    "DescribedCheck",
    "DescribedLayer",
    "DescribedRule",
    "EvidenceSettings",
    "GrantSettings",
    "IgnoredRule",
    "LayerName",
    "LedgerSettings",
    "NetworkMode",
    "NetworkSettings",
    "PolicyActionKind",
    "PolicyDescription",
    "Rule",
    "RuleKind",
    "SandboxSettings",
    "Settings",
    "TelemetrySettings",
    "Verdict",
    "VerdictName",
]

_WIRE = WIRE_CONFIG

VerdictName = Literal["allow", "confirm", "block"]
PolicyActionKind = Literal["local-safe", "destructive", "protected"]
"""How the policy classes a call; unlike ``audit.ActionKind`` it includes ``local-safe``."""
RuleKind = Literal["destructive", "protected"]
Access = Literal["read", "write"]
LayerName = Literal["builtin", "user", "project"]

RULE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
_MAX_ITEMS = 256
_MAX_TEXT = 1000


class Verdict(BaseModel):
    """What the policy says about one tool call.

    ``path`` is the normalized path that goes into the fingerprint (file tools only);
    for bash it is ``None`` because the payload hash binds the exact command string.
    """

    model_config = _WIRE

    verdict: VerdictName
    action_kind: PolicyActionKind
    rule_ids: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    path: str | None = None


class ConfigProblem(BaseModel):
    """One thing wrong with a config file; ``str()`` is ``FILE:LINE: key: message``."""

    model_config = _WIRE

    file: str
    line: int = Field(ge=1)
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.key}: {self.message}"


_Texts = tuple[str, ...]


class Rule(BaseModel):
    """One policy rule, as written in a TOML layer (``[[rule]]``) or built in.

    Exactly one family per rule: ``paths`` (path globs), ``program`` (bash command
    shape) or only ``tools`` (tool names). ``verdict = "allow"`` rules are exceptions:
    they name the built-in rules they relax in ``relaxes`` and only count in the
    user's layer.
    """

    model_config = _WIRE

    id: str = Field(pattern=RULE_ID_PATTERN)
    verdict: VerdictName
    kind: RuleKind | None = None
    reason: str = Field(default="", max_length=_MAX_TEXT)
    tools: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    # path family
    paths: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    exclude: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    access: tuple[Access, ...] = ("read", "write")
    # bash command-shape family
    program: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    subcommand: _Texts = Field(default=(), max_length=16)
    flags: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    all_flags: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    unless_flags: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    args: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    arg_regex: str | None = Field(default=None, max_length=_MAX_TEXT)
    target_paths: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    # exceptions (verdict = "allow")
    relaxes: _Texts = Field(default=(), max_length=_MAX_ITEMS)

    @model_validator(mode="after")
    def _one_family(self) -> Rule:
        families = [name for name in ("paths", "program") if getattr(self, name)]
        if len(families) > 1:
            raise ValueError("a rule has either 'paths' or 'program', not both")
        if not families and not self.tools:
            raise ValueError("a rule needs 'paths', 'program' or 'tools'")
        shape_keys = ("subcommand", "flags", "all_flags", "unless_flags", "args", "arg_regex")
        if "program" not in families:
            stray = [k for k in (*shape_keys, "target_paths") if getattr(self, k)]
            if stray:
                raise ValueError(f"'{stray[0]}' needs 'program'")
        if "paths" not in families and self.exclude:
            raise ValueError("'exclude' needs 'paths'")
        if not self.access:
            raise ValueError("'access' must name 'read' and/or 'write'")
        if self.arg_regex is not None:
            try:
                re.compile(self.arg_regex)
            except re.error as exc:
                raise ValueError(f"'arg_regex' is not a valid regular expression: {exc}") from None
        if self.verdict == "allow" and not self.relaxes:
            raise ValueError(
                "an allow rule must list the built-in rule ids it relaxes in 'relaxes'"
            )
        if self.verdict != "allow" and self.relaxes:
            raise ValueError("'relaxes' only makes sense with verdict = \"allow\"")
        if any(not item for item in (*self.tools, *self.paths, *self.program, *self.flags)):
            raise ValueError("list entries must not be empty strings")
        return self

    @property
    def family(self) -> Literal["paths", "program", "tools"]:
        if self.paths:
            return "paths"
        if self.program:
            return "program"
        return "tools"

    @property
    def effective_kind(self) -> RuleKind:
        if self.kind is not None:
            return self.kind
        return "protected" if self.paths else "destructive"


class Settings(BaseModel):
    """``[settings]`` of a layer; unset values inherit from the layer below."""

    model_config = _WIRE

    resolve_symlinks: bool | None = None
    case_sensitive_paths: bool | None = None
    shell_tools: _Texts | None = Field(default=None, max_length=64)


class LedgerSettings(BaseModel):
    """``[ledger]``: where evidence is consumed (user layer only; default: SQLite in the home).

    ``url = "postgresql://…"`` shares one consumption ledger between guards and monitors
    on many hosts; ``$PI_OPERATOR_GUARD_LEDGER`` wins over it. A project file's ``[ledger]``
    is refused: pointing the ledger at a database the model controls would undo single use.
    """

    model_config = _WIRE

    url: str = Field(min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _postgres(self) -> LedgerSettings:
        if not self.url.startswith(("postgresql://", "postgres://")):
            raise ValueError("'url' must be a postgresql:// URL")
        return self


NetworkMode = Literal["open", "off", "allowlist"]
_LEGACY_NETWORK = {"shared": "open", "none": "off"}
# host, *.domain or an IP literal (IPv6 in brackets), optionally :port
_ALLOW_ENTRY = re.compile(
    r"(?:\*\.)?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
    r"(?::[0-9]{1,5})?"
    r"|\[[0-9a-f:.]+\](?::[0-9]{1,5})?"
)


class NetworkSettings(BaseModel):
    """``[sandbox.network]``: what the agent's commands may reach (user layer only).

    ``mode``: ``open`` shares the host's network; ``off`` gives every command a network of
    its own with nothing in it; ``allowlist`` does the same and lets commands reach the
    hosts in ``allow`` through the guard's proxy (``HTTP(S)_PROXY``), nothing else.
    ``allow`` entries are ``host``, ``*.domain`` (its subdomains) or an IP literal, each
    optionally ``:port`` (without one, ports 80 and 443). The string forms ``network =
    "open" | "off" | "allowlist"`` (and the older ``"shared"`` / ``"none"``) set the mode.
    """

    model_config = _WIRE

    mode: NetworkMode = "open"
    allow: _Texts = Field(default=(), max_length=_MAX_ITEMS)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: object) -> object:
        if isinstance(data, str):
            return {"mode": _LEGACY_NETWORK.get(data, data)}
        return data

    @model_validator(mode="after")
    def _entries(self) -> NetworkSettings:
        for entry in self.allow:
            if entry != entry.lower() or not _ALLOW_ENTRY.fullmatch(entry):
                raise ValueError(
                    "allow entries are a lower-case host, *.domain or IP literal, "
                    f"optionally :port, got {entry!r}"
                )
            port = entry.rpartition(":")[2] if entry.rfind(":") > entry.rfind("]") else None
            if port is not None and not 0 < int(port) < 65536:
                raise ValueError(f"ports are 1..65535, got {entry!r}")
        return self


class SandboxSettings(BaseModel):
    """``[sandbox]``: the OS sandbox around the agent's shell commands (user layer only).

    A project file's ``[sandbox]`` table is refused: the model can write the project, and
    every key here can widen what the agent reaches. Paths are absolute or start with ``~``.

    ``home``: ``hidden`` (default) covers the user's home, showing only what tools need to
    read (``readable`` adds more); ``read-only`` shows it all read-only except the credential
    paths. ``unset_env`` adds variable names (or globs) removed from the agent's commands;
    ``keep_env`` keeps one the built-in credential list would remove.

    ``ask``: ``losses`` (default) lets a destructive call run without a dialog when every
    target can be restored or rebuilt from what the operator had (docs/policy.md, "Calls
    that run unasked"); ``every`` asks for every destructive call, as before.
    ``regenerable`` adds directory names (``dist``, ``target`` …) to the places tools make
    again.
    """

    model_config = _WIRE

    mode: Literal["required", "off"] = "required"
    writable: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    hidden: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    home: Literal["hidden", "read-only"] = "hidden"
    readable: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    unset_env: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    keep_env: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    tmp: Literal["session", "private", "host"] = "session"
    network: NetworkSettings = NetworkSettings()
    effects: Literal["review", "off"] = "review"
    ask: Literal["losses", "every"] = "losses"
    regenerable: _Texts = Field(default=(), max_length=_MAX_ITEMS)
    bwrap: str | None = Field(default=None, min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _paths(self) -> SandboxSettings:
        for name in (*self.unset_env, *self.keep_env):
            if not re.fullmatch(r"[A-Za-z_*?][A-Za-z0-9_*?]*", name):
                raise ValueError(f"variable names are letters, digits, _ and globs, got {name!r}")
        named = (
            *self.writable,
            *self.hidden,
            *self.readable,
            *((self.bwrap,) if self.bwrap else ()),
        )
        for path in named:
            if not path.startswith(("/", "~")) or "\0" in path or len(path) > 4096:
                raise ValueError(f"paths must be absolute or start with '~', got {path!r}")
        for name in self.regenerable:
            if not name or "/" in name or name in (".", "..", ".git") or "\0" in name:
                raise ValueError(f"'regenerable' takes directory names, got {name!r}")
        if self.bwrap is not None and self.bwrap.startswith("~"):
            raise ValueError("'bwrap' must be an absolute path")
        return self


class ApprovalSettings(BaseModel):
    """``[approvals]``: the approval port (user layer only).

    ``headless``: what a call that needs the operator does in a pi session without a UI
    (``pi -p``, JSON mode): ``block`` (the default) blocks it at once; ``wait`` keeps it
    waiting, up to the confirm timeout, for an answer from a second terminal or the page
    (``pi-guard approvals``), and says on stderr where to answer. ``page``: the sidecar
    serves the approval page on 127.0.0.1 (``port``) and ``/guard`` shows its one-time login
    address. A project file's ``[approvals]`` is refused.
    """

    model_config = _WIRE

    headless: Literal["block", "wait"] = "block"
    page: bool = False
    """Start the approval page (as ``pi-guard approvals serve``) with the session's sidecar."""
    port: int = Field(default=0, ge=0, le=65535)
    """The page's port on 127.0.0.1 (0: any free one)."""


class McpSettings(BaseModel):
    """``[mcp]``: MCP servers whose tool hints the operator trusts (user layer only).

    ``trust_hints``: server names (as in pi's ``mcp.json``) whose ``readOnlyHint`` lets a
    call run unasked, and only when that server is configured in the user's pi ``mcp.json``
    and not replaced by the project's ``.pi/mcp.json``. Every other MCP call asks (see
    :mod:`guard._policy.matching.tools`). A project file's ``[mcp]`` is refused: the model
    can write the project.
    """

    model_config = _WIRE

    trust_hints: _Texts = Field(default=(), max_length=_MAX_ITEMS)

    @model_validator(mode="after")
    def _names(self) -> McpSettings:
        for name in self.trust_hints:
            if not _MCP_SERVER.fullmatch(name):
                raise ValueError(
                    f"server names are letters, digits, '_' and '-' (as pi's), got {name!r}"
                )
        return self


_MCP_SERVER = re.compile(r"[A-Za-z0-9_-]{1,128}")


class EvidenceSettings(BaseModel):
    """``[evidence]``: what this home's consumers require of evidence (user layer only).

    ``require_operator_signature``: ``pi-guard consume`` and the monitor refuse evidence
    that carries no signature of the operator's own enrolled authenticator (decision
    ``not-operator-signed``, reason ``no-operator-signature``, exit 3), so a yes from pi's
    dialog alone, the second terminal or a grant is not enough. A project file's
    ``[evidence]`` is refused.
    """

    model_config = _WIRE

    require_operator_signature: bool = False


class GrantSettings(BaseModel):
    """``[grants]``: the limits of a scoped grant ("Yes, and allow calls like this for this
    session").

    ``enabled`` offers grants at all; ``max_minutes`` is the longest a grant lasts (1..1440),
    ``max_uses`` the most calls one grant covers (1..1000). The contract: the user's file sets
    the maxima (it may raise them up to those limits) and can switch grants off; a project
    file can only lower them or switch grants off, never raise them or switch grants back on
    (the model can write the project). A ``[grants]`` table that does not validate, in any
    layer, switches grants off; a user file with problems never raises them above the
    defaults.
    """

    model_config = _WIRE

    enabled: bool = True
    max_minutes: int = Field(default=30, ge=1, le=1440)
    max_uses: int = Field(default=20, ge=1, le=1000)


_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class TelemetrySettings(BaseModel):
    """``[telemetry]``: OpenTelemetry export of the guard's decisions (user layer only).

    ``enabled`` (off by default) exports one ``execute_tool`` span per guarded call over
    OTLP/HTTP. ``endpoint``: the collector's base URL (``/v1/traces`` is appended); unset,
    the standard ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``
    count. ``headers``: header name -> the *name* of an environment variable that holds
    its value (never the value: the file is no place for a secret); unset, the standard
    ``OTEL_EXPORTER_OTLP_HEADERS`` count. ``previews`` also exports the audit log's redacted
    command or path preview (off: commands never leave the machine). ``queue`` bounds the
    events waiting for export (more are dropped and counted); ``timeout_seconds`` bounds one
    export. A project file's ``[telemetry]`` is refused: the model can write the project.
    """

    model_config = _WIRE

    enabled: bool = False
    endpoint: str | None = Field(default=None, min_length=1, max_length=2048)
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)
    previews: bool = False
    queue: int = Field(default=2048, ge=16, le=65536)
    timeout_seconds: float = Field(default=5.0, gt=0, le=60)

    @model_validator(mode="after")
    def _checked(self) -> TelemetrySettings:
        if self.endpoint is not None and (
            not re.fullmatch(r"https?://[^\s/?#@]+(?:/[^\s?#]*)?", self.endpoint)
        ):
            raise ValueError(
                f"'endpoint' must be an http:// or https:// URL without credentials, "
                f"got {self.endpoint[:80]!r}"
            )
        for name, variable in self.headers.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"header names are HTTP tokens, got {name[:80]!r}")
            if not _ENV_NAME.fullmatch(variable):
                raise ValueError(
                    f"header {name!r} must name an environment variable that holds its value "
                    "(letters, digits and _), never the value itself"
                )
        return self


class ConfigFile(BaseModel):
    """A whole TOML layer."""

    model_config = _WIRE

    version: Literal[1] = 1
    settings: Settings = Settings()
    rule: tuple[Rule, ...] = Field(default=(), max_length=4096)


class DescribedRule(BaseModel):
    """A rule of the effective policy and the layer it came from."""

    model_config = _WIRE

    id: str
    layer: LayerName
    verdict: VerdictName
    kind: RuleKind
    reason: str
    match: dict[str, list[str] | str]


class DescribedCheck(BaseModel):
    """A built-in check implemented in code (bash analysis), not as a data rule."""

    model_config = _WIRE

    id: str
    layer: Literal["builtin"] = "builtin"
    verdict: VerdictName
    kind: RuleKind
    reason: str


class DescribedLayer(BaseModel):
    """One configuration layer and what became of it."""

    model_config = _WIRE

    layer: LayerName
    file: str | None
    status: Literal["loaded", "absent", "partial", "invalid"]


class IgnoredRule(BaseModel):
    """A rule (or setting) that was read but does not take effect, and why."""

    model_config = _WIRE

    id: str
    layer: LayerName
    file: str
    line: int
    reason: str


class PolicyDescription(BaseModel):
    """The effective merged policy, for ``pi-guard policy show``."""

    model_config = _WIRE

    precedence: str
    layers: tuple[DescribedLayer, ...]
    placeholders: dict[str, str]
    placeholder_lists: dict[str, tuple[str, ...]]
    settings: dict[str, bool | list[str]]
    settings_from: dict[str, LayerName]
    grants: GrantSettings
    rules: tuple[DescribedRule, ...]
    checks: tuple[DescribedCheck, ...]
    ignored: tuple[IgnoredRule, ...]
    problems: tuple[str, ...]
