"""Where the guard itself is installed: what the agent may never write (and why).

The sidecar imports its packages (``guard``, ``audit``, ``planning``), runs on the interpreter under
``sys.prefix`` (a venv) and ``sys.base_prefix``, loads every ``.pth`` file in its
site-packages at start-up, and pi loads its extension from ``extensions/operator-guard``.
A write to any of these would let the agent change what the guard runs, so each is a
placeholder of the built-in ``builtin.guard-installation`` rule.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

import audit
import planning

__all__ = ["installation_paths"]


@lru_cache(maxsize=1)
def installation_paths() -> dict[str, str]:
    """Placeholder name -> absolute path of the running guard's installation."""
    paths = sysconfig.get_paths()
    purelib = paths.get("purelib") or sys.prefix
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else purelib
    return {
        "GUARD_PACKAGE": os.fspath(Path(__file__).resolve().parents[2]),
        "AUDIT_PACKAGE": os.fspath(Path(audit.__file__).resolve().parent),
        "PLANNING_PACKAGE": os.fspath(Path(planning.__file__).resolve().parent),
        "PYTHON_PREFIX": sys.prefix,
        "PYTHON_BASE_PREFIX": sys.base_prefix,
        "PYTHON_PURELIB": purelib,
        "PYTHON_PLATLIB": paths.get("platlib") or purelib,
        "PYTHON_STDLIB": paths.get("stdlib") or sys.base_prefix,
        "PYTHON_USER_SITE": user_site or purelib,
    }
