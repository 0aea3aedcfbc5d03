"""Which process the sidecar serves: pi, whose argv and environment the policy reads.

A sidecar started cold is pi's child (``os.getppid()``). One forked by the warm start
(:mod:`guard._warm`) is the fork server's child; its launcher, pi's child, hands it over and
the fork server notes pi's pid here before the sidecar runs (:func:`serve_for`).
"""

from __future__ import annotations

import os

__all__ = ["pi_pid", "serve_for"]

_pi: list[int] = []


def pi_pid() -> int:
    """pi's pid: the one :func:`serve_for` noted, else this process's parent."""
    return _pi[0] if _pi else os.getppid()


def serve_for(pid: int) -> None:
    """Note ``pid`` as pi's (a warm-started sidecar, whose parent is the fork server)."""
    _pi[:] = [pid]
