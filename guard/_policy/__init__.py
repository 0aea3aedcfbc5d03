"""The policy engine: which tool calls are destructive or protected (see the guide, "Policy").

Layers: built-in defaults < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``;
strictest wins. Bash commands are analyzed on a real parser (tree-sitter) and fail closed.
"""

from guard._policy.engine import Policy
from guard._policy.settings.config import check_config_file
from guard._policy.settings.models import ConfigProblem, PolicyDescription, Rule, Settings, Verdict

__all__ = [
    "ConfigProblem",
    "Policy",
    "PolicyDescription",
    "Rule",
    "Settings",
    "Verdict",
    "check_config_file",
]
