"""The policy engine: which tool calls are destructive or protected (see docs/policy.md).

Layers: built-in defaults < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``;
strictest wins. Bash commands are analyzed on a real parser (tree-sitter) and fail closed.

This face is what the other wings use: the engine (:class:`Policy`, :class:`PolicyCache`), the
settings' shapes and layers, the tool facts, and the pieces the grants, the sandbox and the
effects review build on (the bash analysis, path mentions and :func:`realpath`, the writable
set's checks, the surroundings' placeholders). Lazy: importing it costs nothing until a name
is used.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._policy.bash.model import (
        Command,
    )
    from guard._policy.bash.walker import (
        analyze,
    )
    from guard._policy.cache import (
        PolicyCache,
    )
    from guard._policy.engine import (
        Policy,
    )
    from guard._policy.layering import (
        CONFIG_FILE_NAME,
        load_layers,
    )
    from guard._policy.matching.checks import (
        CHECKS,
    )
    from guard._policy.matching.classify import (
        pi_file_target,
    )
    from guard._policy.matching.paths import (
        command_mentions,
    )
    from guard._policy.matching.realpath import (
        realpath,
    )
    from guard._policy.matching.tools import (
        PI_TOOLS,
        PLANNER_TOOL_NAME,
        McpTrust,
        ToolFacts,
        describe_source,
    )
    from guard._policy.matching.writable import (
        TOO_WIDE_HINT,
        too_wide,
        within,
    )
    from guard._policy.settings.config import (
        check_config_file,
        read_layer,
    )
    from guard._policy.settings.homes import (
        known_homes,
        remember_home,
    )
    from guard._policy.settings.lineage import (
        pi_pid,
        serve_for,
    )
    from guard._policy.settings.models import (
        ConfigProblem,
        LayerName,
        PolicyDescription,
        Rule,
        SandboxSettings,
        Settings,
        TelemetrySettings,
        Verdict,
    )
    from guard._policy.settings.pi_mcp import (
        McpServers,
        read_mcp_servers,
    )
    from guard._policy.settings.pi_resources import (
        pi_settings_resources,
    )
    from guard._policy.settings.surroundings import (
        credential_files,
        git_config_names_programs,
        git_config_values,
        note_pi_runtime,
        placeholder_lists,
    )
    from guard._policy.settings.worktree_hooks import (
        worktree_hook_files,
    )

__all__ = [
    "CHECKS",
    "CONFIG_FILE_NAME",
    "PI_TOOLS",
    "PLANNER_TOOL_NAME",
    "TOO_WIDE_HINT",
    "Command",
    "ConfigProblem",
    "LayerName",
    "McpServers",
    "McpTrust",
    "Policy",
    "PolicyCache",
    "PolicyDescription",
    "Rule",
    "SandboxSettings",
    "Settings",
    "TelemetrySettings",
    "ToolFacts",
    "Verdict",
    "analyze",
    "check_config_file",
    "command_mentions",
    "credential_files",
    "describe_source",
    "git_config_names_programs",
    "git_config_values",
    "known_homes",
    "load_layers",
    "note_pi_runtime",
    "pi_file_target",
    "pi_pid",
    "pi_settings_resources",
    "placeholder_lists",
    "read_layer",
    "read_mcp_servers",
    "realpath",
    "remember_home",
    "serve_for",
    "too_wide",
    "within",
    "worktree_hook_files",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "pi_pid": "guard._policy.settings.lineage",
    "serve_for": "guard._policy.settings.lineage",
    "known_homes": "guard._policy.settings.homes",
    "remember_home": "guard._policy.settings.homes",
    "Command": "guard._policy.bash.model",
    "analyze": "guard._policy.bash.walker",
    "PolicyCache": "guard._policy.cache",
    "Policy": "guard._policy.engine",
    "CONFIG_FILE_NAME": "guard._policy.layering",
    "load_layers": "guard._policy.layering",
    "CHECKS": "guard._policy.matching.checks",
    "pi_file_target": "guard._policy.matching.classify",
    "command_mentions": "guard._policy.matching.paths",
    "realpath": "guard._policy.matching.realpath",
    "McpTrust": "guard._policy.matching.tools",
    "PI_TOOLS": "guard._policy.matching.tools",
    "PLANNER_TOOL_NAME": "guard._policy.matching.tools",
    "ToolFacts": "guard._policy.matching.tools",
    "describe_source": "guard._policy.matching.tools",
    "TOO_WIDE_HINT": "guard._policy.matching.writable",
    "too_wide": "guard._policy.matching.writable",
    "within": "guard._policy.matching.writable",
    "check_config_file": "guard._policy.settings.config",
    "read_layer": "guard._policy.settings.config",
    "ConfigProblem": "guard._policy.settings.models",
    "LayerName": "guard._policy.settings.models",
    "PolicyDescription": "guard._policy.settings.models",
    "Rule": "guard._policy.settings.models",
    "SandboxSettings": "guard._policy.settings.models",
    "Settings": "guard._policy.settings.models",
    "TelemetrySettings": "guard._policy.settings.models",
    "Verdict": "guard._policy.settings.models",
    "McpServers": "guard._policy.settings.pi_mcp",
    "read_mcp_servers": "guard._policy.settings.pi_mcp",
    "pi_settings_resources": "guard._policy.settings.pi_resources",
    "credential_files": "guard._policy.settings.surroundings",
    "git_config_names_programs": "guard._policy.settings.surroundings",
    "git_config_values": "guard._policy.settings.surroundings",
    "note_pi_runtime": "guard._policy.settings.surroundings",
    "placeholder_lists": "guard._policy.settings.surroundings",
    "worktree_hook_files": "guard._policy.settings.worktree_hooks",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
