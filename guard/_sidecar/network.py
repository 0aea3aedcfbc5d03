"""The sidecar's allowlist proxy for its session: started with the plan, gone with it.

The socket lives in a private directory of its own under the system's temporary directory
(a Unix socket's path is limited to 107 bytes; a guard home can be longer), bound into each
sandbox read-only at a fixed place. When the proxy cannot start, the plan stays as it is:
the commands then have an empty network (fail closed), and the reason is logged.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from guard._home import PROXY_SOCKET_FILE
from guard._logging import get_logger
from guard._sandbox import SandboxPlan

if TYPE_CHECKING:  # the proxy runs on asyncio (~15 ms to import): only when a plan needs it
    from guard._sandbox.proxy import NetworkProxy, ProxyRefusal

__all__ = ["SessionNetwork"]

_log = get_logger("guard.sidecar.network")


class SessionNetwork:
    """One session's proxy, kept in step with its sandbox plan."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._proxy: NetworkProxy | None = None
        self._audited: set[ProxyRefusal] = set()
        self._made = False

    def socket_path(self) -> str:
        """Where the proxy would listen: a directory of its own, made (mode 0700, never one
        that exists already) only when a proxy starts."""
        if self._dir is None:
            name = f"pi-guard-net-{os.getpid()}-{secrets.token_hex(6)}"
            self._dir = Path(tempfile.gettempdir()) / name
        return str(self._dir / PROXY_SOCKET_FILE)

    def update(self, plan: SandboxPlan) -> None:
        """Run the proxy ``plan`` names (restarted when its allow list changed), or none."""
        wanted = plan.state == "sandboxed" and plan.proxy_socket is not None
        if self._proxy is not None and (
            not wanted or tuple(e.text for e in self._proxy.allow) != plan.network_allow
        ):
            self._proxy.stop()
            self._proxy = None
        if not wanted or self._proxy is not None or plan.proxy_socket is None:
            return
        from guard._sandbox.proxy import NetworkProxy

        proxy = NetworkProxy(Path(plan.proxy_socket), plan.network_allow)
        try:
            if self._dir is not None and not self._made:
                os.mkdir(self._dir, 0o700)  # raises if anything is there already
                self._made = True
            proxy.start()
        except OSError as exc:
            _log.error("network-proxy-failed", socket=plan.proxy_socket, error=str(exc))
            return
        self._proxy = proxy
        _log.info("network-proxy", socket=plan.proxy_socket, allow=list(plan.network_allow))

    def refusals(self) -> tuple[list[ProxyRefusal], list[ProxyRefusal]]:
        """What the proxy refused since the last call, and of it what is new this session
        (to audit: each distinct refusal once, at most 1,024 kept)."""
        taken = self._proxy.take_refusals() if self._proxy is not None else []
        new = [r for r in taken if r not in self._audited]
        if len(self._audited) < 1024:
            self._audited.update(new)
        return taken, new

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.stop()
            self._proxy = None
        if self._dir is not None and self._made:
            with contextlib.suppress(OSError):
                shutil.rmtree(self._dir)
        self._dir = None
        self._made = False
