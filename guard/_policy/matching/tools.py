"""Tools beyond pi's built-in file and shell tools: what the guard knows of a tool, and why
a call of one it cannot judge from facts asks.

pi 1.x reaches the world through more than its seven built-in tools: MCP servers' tools
(``mcp__<server>__<tool>``), ``codemode`` scripts and ``tool_search`` (which reach other
tools: each nested call passes the guard on its own), the MCP resource tools, and tools that
other extensions register. The shim tells the sidecar what pi says of each tool
(:class:`ToolFacts`: ``pi.getAllTools()``'s ``sourceInfo``, ``namespace``, ``annotations``).

The rule (docs/threat-model.md, "Tools the guard does not know"):

- a tool the guard knows is judged by its rules (pi's built-in tools, the guard's own
  planner, the tools that only reach other tools, the MCP resource tools, which read);
- any other call asks (``builtin.unknown-tool``), unless a rule of the user's file relaxes
  it by tool glob, or MCP hints count for it;
- MCP hints (``readOnlyHint`` and ``destructiveHint``, the MCP 2025-06-18 ToolAnnotations)
  are claims of the server. They count only for a tool of pi's own MCP client
  (``builtin:mcp``) whose server the user's policy names in ``[mcp] trust_hints``, is
  configured in the user's pi ``mcp.json`` and is not replaced by the project's
  ``.pi/mcp.json``; and only in the safe direction: ``readOnlyHint: true`` without
  ``destructiveHint: true`` lets the call run unasked. A hint never makes a call ask less
  in any other way;
- whatever a tool is, string arguments that name paths are matched against the path rules
  (a "read-only" tool given ``~/.ssh/id_rsa`` still asks; the guard's files stay blocked),
  and an argument named like a shell command is analysed as one (what it would run).

Facts change only whether the call asks; the kind (``protected``) and the fingerprint come
from the tool's name and input alone, so a monitor that knows no facts recomputes the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from audit import shorten
from audit.wire import WIRE_CONFIG
from guard._policy.settings.pi_mcp import ANY_SERVER, server_key

__all__ = [
    "BUILTIN_FILE_TOOLS",
    "MCP_RESOURCE_TOOLS",
    "PI_TOOLS",
    "PLANNER_TOOL_NAME",
    "REACHING_TOOLS",
    "McpTrust",
    "ToolFacts",
    "ToolHints",
    "ToolNamespace",
    "command_strings",
    "describe_source",
    "mcp_server_of",
    "path_strings",
]

PLANNER_TOOL_NAME = "operator_confirmation_implementation_channel_plan"
"""The guard's own read-only planner tool (registered by the shim)."""

BUILTIN_FILE_TOOLS = frozenset({"read", "write", "edit", "grep", "find", "ls"})
PI_TOOLS = BUILTIN_FILE_TOOLS | {"bash"}
"""pi's seven built-in tools, which the guard judges by what their input does."""
REACHING_TOOLS = frozenset({"codemode", "tool_search"})
"""pi's tools that only reach other tools; every call they make passes the guard itself."""
MCP_RESOURCE_TOOLS = frozenset(
    {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
)
"""pi's MCP resource tools: a resource list or read is a read (``uri`` is matched as one)."""

_SPACE = re.compile(r"\s")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_MAX_STRINGS = 256  # string arguments looked at per call; more is too complex to judge
_MAX_DEPTH = 8
_PATH_KEYS = frozenset(
    {
        "path",
        "paths",
        "file",
        "files",
        "filename",
        "file_path",
        "filepath",
        "dir",
        "dirs",
        "directory",
        "folder",
        "cwd",
        "root",
        "target",
        "source",
        "src",
        "dest",
        "destination",
        "uri",
        "location",
        "output",
        "input",
    }
)
_COMMAND_KEYS = frozenset({"command", "cmd", "script", "shell", "commandline", "command_line"})


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class ToolHints(BaseModel):
    """MCP ``ToolAnnotations`` as pi reports them; other members (``title``) are ignored."""

    model_config = ConfigDict(**{**WIRE_CONFIG, "extra": "ignore"})

    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolNamespace(BaseModel):
    """A tool's ``namespace`` (an MCP server's: ``mcp__<server>``, aliases ``<server>``)."""

    model_config = ConfigDict(**{**WIRE_CONFIG, "extra": "ignore"})

    name: str = Field(min_length=1, max_length=256)
    aliases: list[str] = Field(default_factory=list, max_length=16)


class ToolFacts(BaseModel):
    """What pi says of one tool (``pi.getAllTools()``), sent by the shim with each call.

    ``source``: ``builtin`` (shipped with pi: core tools and built-in extensions such as
    ``builtin:mcp``), ``guard`` (registered by this guard's shim), ``extension`` (another
    extension), ``sdk``, or ``unknown`` (pi did not say: a tool the guard cannot place).
    ``origin``: ``sourceInfo.path`` (``builtin:mcp``, an extension's file).
    """

    model_config = WIRE_CONFIG

    name: str = Field(min_length=1, max_length=256)
    source: Literal["builtin", "guard", "extension", "sdk", "unknown"] = "unknown"
    origin: str | None = Field(default=None, max_length=4096)
    namespace: ToolNamespace | None = None
    annotations: ToolHints | None = None
    exposure: str | None = Field(default=None, max_length=64)
    reaches_tools: bool = False

    @property
    def from_pi_mcp(self) -> bool:
        """A tool of pi's own MCP client (not one another extension named like it)."""
        return self.source == "builtin" and self.origin == "builtin:mcp"

    @property
    def server(self) -> str | None:
        """The MCP server of a tool of pi's own MCP client, as its configuration names it."""
        if not self.from_pi_mcp or self.namespace is None:
            return None
        for alias in self.namespace.aliases:
            if _SERVER_NAME.match(alias) and not alias.startswith("mcp__"):
                return alias
        name = self.namespace.name
        return name[5:] if name.startswith("mcp__") and _SERVER_NAME.match(name[5:]) else None


def mcp_server_of(tool_name: str) -> tuple[str, ...]:
    """The server keys a tool name ``mcp__<server>__<tool>`` may belong to (a server name
    may itself hold ``__``, so every split is a candidate); ``()`` for another name."""
    if not tool_name.startswith("mcp__"):
        return ()
    rest = tool_name[5:]
    parts = rest.split("__")
    return tuple("__".join(parts[:i]) for i in range(1, len(parts)) if parts[0])


@dataclass(frozen=True, slots=True)
class McpTrust:
    """The operator's trust in MCP servers' hints, and where pi's configuration defines them.

    ``hints``: server keys named in the user's ``[mcp] trust_hints``; ``user`` and
    ``project``: server keys that the user's ``mcp.json`` and the project's ``.pi/mcp.json``
    define (a project entry with ``command``, ``url`` or ``type`` replaces a user one).
    """

    hints: frozenset[str] = frozenset()
    user: frozenset[str] = frozenset()
    project: frozenset[str] = frozenset()

    def project_defines(self, tool_name: str, facts: ToolFacts | None) -> str | None:
        """The server of ``tool_name`` if the project's ``.pi/mcp.json`` defines it."""
        server = facts.server if facts is not None else None
        candidates = (server_key(server),) if server else mcp_server_of(tool_name)
        if candidates and ANY_SERVER in self.project:
            return candidates[0]  # a project file the guard could not read: any server
        return next((c for c in candidates if c in self.project), None)

    def trusts_hints_of(self, facts: ToolFacts) -> str | None:
        """Why ``facts``' hints count (the server's name), or ``None`` when they do not."""
        server = facts.server
        if server is None:
            return None
        key = server_key(server)
        if key not in self.hints or key not in self.user:
            return None
        if key in self.project or ANY_SERVER in self.project:
            return None
        return server


def describe_source(tool_name: str, facts: ToolFacts | None) -> str:
    """Where a tool comes from, in words for the dialog."""
    if facts is None:
        return "pi did not say where this tool comes from"
    if facts.from_pi_mcp:
        server = facts.server
        return f"MCP server '{server}'" if server else "an MCP server pi did not name"
    if facts.source == "builtin":
        return f"pi built-in ({shorten(facts.origin or 'builtin')})"
    if facts.source == "guard":
        return "this guard"
    if facts.source == "extension":
        return f"the extension {shorten(facts.origin or '(unnamed)')}"
    if facts.source == "sdk":
        return "the program that embeds pi (SDK)"
    return "pi did not say where this tool comes from"


def _strings(value: Any, key: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > _MAX_DEPTH:
        yield key, "\0too-deep"
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, _key(str(k)), depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, key, depth + 1)


def _as_path(key: str, text: str) -> str | None:
    value = unicodedata.normalize("NFC", text.strip())
    if value[:5].lower() == "file:":  # RFC 3986 3.1: a scheme is case-insensitive
        parts = urlsplit(value)
        return unquote(parts.path) or None
    if "\n" in value.strip() and key not in _PATH_KEYS:
        return None  # text, not a path
    if value.startswith(("/", "~", "./", "../")) or value in {".", ".."}:
        return value
    if key in _PATH_KEYS and value and "://" not in value:
        return value
    # A word that reads like a relative path (``.env``, ``config/prod.yml``) under any key: a
    # server resolves it against its own directory, usually the project's.
    relative = value.startswith(".") or "/" in value
    if relative and "://" not in value and not _SPACE.search(value) and len(value) <= 4096:
        return value
    return None


def path_strings(tool_input: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The string arguments of a call that name paths (``file:`` URIs as their path), and
    whether there were too many strings, or too deep, to look at every one."""
    out: list[str] = []
    for seen, (key, text) in enumerate(_strings(tool_input, "", 0), 1):
        if seen > _MAX_STRINGS or text == "\0too-deep":
            return out, True
        path = _as_path(key, text)
        if path is not None and path not in out:
            out.append(path)
    return out, False


def command_strings(tool_input: Mapping[str, Any]) -> list[str]:
    """String arguments named like a shell command (``command``, ``cmd``, ``script`` …)."""
    return [
        text
        for key, text in _strings(tool_input, "", 0)
        if key in _COMMAND_KEYS and text and text != "\0too-deep"
    ][:8]
