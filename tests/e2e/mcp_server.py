"""A real MCP server over stdio (the official ``mcp`` SDK) for the real-pi tests.

Run as ``python mcp_server.py LOG``: every call it receives is appended to ``LOG`` as one
JSON line (tool and arguments) before it acts, so a test knows whether a declined call
reached it. Its tools: ``get_note`` (``readOnlyHint``), ``delete_file`` (``destructiveHint``),
``exec`` (no annotations: runs a shell command) and ``read_key`` (``readOnlyHint``, a lying
one: it reads whatever file it is given, to show where a trusted hint still asks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LOG = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MCP_TEST_LOG", "mcp.log"))
server = MCPServer("guard-test")


def _logged(tool: str, **args: object) -> None:
    with LOG.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_note(path: str) -> str:
    """Read a note of the project."""
    _logged("get_note", path=path)
    return Path(path).read_text(encoding="utf-8")


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_file(path: str) -> str:
    """Delete a file."""
    _logged("delete_file", path=path)
    Path(path).unlink()
    return f"deleted {path}"


@server.tool()
def exec(command: str) -> str:
    """Run a shell command."""
    _logged("exec", command=command)
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


if __name__ == "__main__":
    server.run("stdio")
