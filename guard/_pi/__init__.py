"""pi integration: the installer, the session-file reader and the extension shim.

``extension/`` is package data (``index.ts`` and the modules it imports): ``install`` copies
it into pi's extension directory with a ``guard.json`` naming the Python that runs the sidecar.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._pi.doctor import (
        diagnose,
    )
    from guard._pi.install import (
        InstallResult,
        Target,
    )
    from guard._pi.probe import (
        newer_than_tested,
    )
    from guard._pi.session import (
        session_envelopes,
    )
    from guard._pi.sessions_report import (
        guard_absent_rows,
    )
    from guard._pi.tools import (
        PlannerTool,
        planner_tools,
    )
    from guard._pi.warm import (
        WarmServer,
        check_warm,
        warm_server,
    )

__all__ = [
    "InstallResult",
    "PlannerTool",
    "Target",
    "WarmServer",
    "check_warm",
    "diagnose",
    "guard_absent_rows",
    "newer_than_tested",
    "planner_tools",
    "session_envelopes",
    "warm_server",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "WarmServer": "guard._pi.warm",
    "check_warm": "guard._pi.warm",
    "warm_server": "guard._pi.warm",
    "diagnose": "guard._pi.doctor",
    "InstallResult": "guard._pi.install",
    "Target": "guard._pi.install",
    "newer_than_tested": "guard._pi.probe",
    "session_envelopes": "guard._pi.session",
    "guard_absent_rows": "guard._pi.sessions_report",
    "PlannerTool": "guard._pi.tools",
    "planner_tools": "guard._pi.tools",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
