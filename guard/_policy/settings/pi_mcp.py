"""Which MCP servers pi's configuration files define: the user's ``mcp.json`` (in pi's agent
directory) and the project's ``.pi/mcp.json`` (pi's docs/mcp.md, "Configure servers").

Read only to decide whose hints count (:class:`guard._policy.matching.tools.McpTrust`) and
to show the operator where a server comes from; it fails closed: a project file that cannot
be read as pi's format defines every server (so no server's hints count while it is there).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from audit import JsonInputError
from audit.wire import load_json

__all__ = ["ANY_SERVER", "MCP_FILE", "McpServers", "read_mcp_servers", "server_key"]

MCP_FILE = "mcp.json"
ANY_SERVER = "*"
"""Stands for every server: a file the guard could not read as pi's format."""
_MAX_BYTES = 1 << 20


def server_key(name: str) -> str:
    """pi's identity of a server name: names that differ only in ``-`` and ``_`` are one."""
    return name.replace("-", "_")


@dataclass(frozen=True, slots=True)
class McpServers:
    """The server keys one ``mcp.json`` defines (``enabled: false`` entries included: they
    are one click in ``/mcp`` away). ``replacing``: the entries that start a server of their
    own (``command``, ``url`` or ``type``); an entry without them only overrides the
    exposure of a server defined elsewhere."""

    file: str
    present: bool
    defined: frozenset[str] = frozenset()
    replacing: frozenset[str] = frozenset()
    problem: str | None = None


def read_mcp_servers(path: Path) -> McpServers:
    """The servers ``path`` defines; a file that is not pi's format defines :data:`ANY_SERVER`."""
    file = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        return McpServers(file, present=False)
    except OSError as exc:
        return _unreadable(file, exc.strerror or type(exc).__name__)
    try:
        document = load_json(data, max_bytes=_MAX_BYTES)
    except JsonInputError as exc:
        return _unreadable(file, str(exc))
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        return _unreadable(file, "no 'mcpServers' object")
    defined: set[str] = set()
    replacing: set[str] = set()
    for name, entry in servers.items():
        key = server_key(str(name))
        defined.add(key)
        if not isinstance(entry, dict) or {"command", "url", "type"} & set(entry):
            replacing.add(key)
    return McpServers(file, True, frozenset(defined), frozenset(replacing))


def _unreadable(file: str, why: str) -> McpServers:
    every = frozenset({ANY_SERVER})
    return McpServers(file, True, every, every, problem=why)
