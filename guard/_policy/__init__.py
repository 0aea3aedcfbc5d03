"""The policy engine: which tool calls are destructive or protected (see docs/policy.md).

Layers: built-in defaults < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``;
strictest wins. Bash commands are analyzed on a real parser (tree-sitter) and fail closed.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._policy.engine import (
        Policy,
    )
    from guard._policy.matching.tools import (
        PI_TOOLS,
        PLANNER_TOOL_NAME,
        McpTrust,
        ToolFacts,
        describe_source,
    )
    from guard._policy.settings.config import (
        check_config_file,
    )
    from guard._policy.settings.models import (
        ConfigProblem,
        PolicyDescription,
        Rule,
        Settings,
        Verdict,
    )
    from guard._policy.settings.pi_mcp import (
        McpServers,
        read_mcp_servers,
    )

__all__ = [
    "PI_TOOLS",
    "PLANNER_TOOL_NAME",
    "ConfigProblem",
    "McpServers",
    "McpTrust",
    "Policy",
    "PolicyDescription",
    "Rule",
    "Settings",
    "ToolFacts",
    "Verdict",
    "check_config_file",
    "describe_source",
    "read_mcp_servers",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "Policy": "guard._policy.engine",
    "PI_TOOLS": "guard._policy.matching.tools",
    "PLANNER_TOOL_NAME": "guard._policy.matching.tools",
    "McpTrust": "guard._policy.matching.tools",
    "ToolFacts": "guard._policy.matching.tools",
    "describe_source": "guard._policy.matching.tools",
    "McpServers": "guard._policy.settings.pi_mcp",
    "read_mcp_servers": "guard._policy.settings.pi_mcp",
    "check_config_file": "guard._policy.settings.config",
    "ConfigProblem": "guard._policy.settings.models",
    "PolicyDescription": "guard._policy.settings.models",
    "Rule": "guard._policy.settings.models",
    "Settings": "guard._policy.settings.models",
    "Verdict": "guard._policy.settings.models",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
