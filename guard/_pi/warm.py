"""Whether a home has a fork server (the warm start, :mod:`guard._warm`), for ``pi-guard
doctor`` and the tests: its pid (the holder of ``warm.lock``, from ``/proc/locks``) and its
memory (``VmRSS``); and doctor's check of it (:func:`check_warm`, never a failure: without
a fork server a sidecar starts cold)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from guard._checks import Check
from guard._home import WARM_LOCK_FILE, WARM_SOCKET_FILE, warm_idle

__all__ = ["WarmServer", "check_warm", "warm_server"]


class WarmServer(NamedTuple):
    """A home's fork server: ``pid`` is ``None`` when none runs."""

    pid: int | None
    listening: bool
    rss_kib: int | None


def _lock_holder(lock: Path) -> int | None:
    try:
        info = os.stat(lock)
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            rows = handle.read().splitlines()
    except OSError:
        return None
    wanted = f":{info.st_ino}"
    for row in rows:
        fields = row.split()
        # 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].endswith(wanted):
            major_minor = fields[5][: -len(wanted)]
            major, minor = (int(x, 16) for x in major_minor.split(":"))
            if os.makedev(major, minor) == info.st_dev:
                return int(fields[4])
    return None


def _rss_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def warm_server(home: Path) -> WarmServer:
    """The fork server of ``home``, as far as ``/proc`` shows it."""
    pid = _lock_holder(home / WARM_LOCK_FILE)
    listening = (home / WARM_SOCKET_FILE).is_socket()
    return WarmServer(pid, listening, None if pid is None else _rss_kib(pid))


def check_warm(home: Path) -> Check:
    """``warm-start``: off, a fork server running (its pid and memory), or none yet."""
    subject = str(home)
    idle = warm_idle()
    if idle == 0:
        return Check(
            name="warm-start",
            subject=subject,
            status="ok",
            reason="warm-start-off",
            detail="off in this environment ($PI_OPERATOR_GUARD_WARM_IDLE): sidecars start cold",
        )
    server = warm_server(home)
    if server.pid is None:
        return Check(
            name="warm-start",
            subject=subject,
            status="ok",
            reason="no-fork-server",
            detail=f"no fork server running; the next pi session starts one (idle {idle:g} s)",
        )
    memory = "" if server.rss_kib is None else f", {server.rss_kib / 1024:.0f} MiB resident"
    state = "listening" if server.listening else "ending (no longer listening)"
    return Check(
        name="warm-start",
        subject=subject,
        status="ok",
        reason="fork-server-running",
        detail=f"fork server pid {server.pid}{memory}, {state}",
    )
