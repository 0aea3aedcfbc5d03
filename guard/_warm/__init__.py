"""The warm start: a per-home fork server that has imported what a sidecar needs, and the
launcher pi spawns, which gets its sidecar forked from there (or starts one cold).

``launch`` is the launcher (standard library and :mod:`guard._home` only), ``wire`` the
protocol on ``<home>/warm.sock``, ``facts`` what a process is (namespaces, cgroup, the code
stamp), ``server`` the fork server and ``child`` its child becoming the sidecar. Every
session still has a sidecar process of its own; the fork server holds no session's state.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._warm.launch import (
        DEFAULT_IDLE,
        idle_seconds,
    )
    from guard._warm.status import (
        WarmServer,
        check_warm,
        warm_server,
    )

__all__ = [
    "DEFAULT_IDLE",
    "WarmServer",
    "check_warm",
    "idle_seconds",
    "warm_server",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "DEFAULT_IDLE": "guard._warm.launch",
    "WarmServer": "guard._warm.status",
    "check_warm": "guard._warm.status",
    "idle_seconds": "guard._warm.launch",
    "warm_server": "guard._warm.status",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
