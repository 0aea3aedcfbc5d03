"""The policy engine: which tool calls are destructive or protected (see the guide, "Policy").

Layers: built-in defaults < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``;
strictest wins. Bash commands are analyzed on a real parser (tree-sitter) and fail closed.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from guard._policy.engine import (
        Policy,
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

__all__ = [
    "ConfigProblem",
    "Policy",
    "PolicyDescription",
    "Rule",
    "Settings",
    "Verdict",
    "check_config_file",
]

# Each public name's home (``module`` or ``module:attribute``), imported on first use.
_HOMES: dict[str, str] = {
    "Policy": "guard._policy.engine",
    "check_config_file": "guard._policy.settings.config",
    "ConfigProblem": "guard._policy.settings.models",
    "PolicyDescription": "guard._policy.settings.models",
    "Rule": "guard._policy.settings.models",
    "Settings": "guard._policy.settings.models",
    "Verdict": "guard._policy.settings.models",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A public name, imported from its home module on first use (PEP 562)."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*globals(), *__all__])
