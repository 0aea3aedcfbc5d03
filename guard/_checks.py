"""The one typed result of a health check, for ``pi-guard doctor``: each wing checks its own
part (the home in ``_home``, the signing key in ``_evidence``, the audit log in ``_evidence``,
the sandbox in ``_sandbox``, the export of decisions in ``_telemetry``, pi and the installs
in ``_pi``) and ``_pi/doctor`` assembles them.

A check has a ``status`` (``ok``, ``warn``, ``fail`` or ``n/a``), a kebab-case ``reason``
code, a ``detail`` in words and, when something can be done, the ``fix``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG

__all__ = ["Check", "CheckName", "CheckStatus"]

CheckStatus = Literal["ok", "warn", "fail", "n/a"]
CheckName = Literal[
    "pi",
    "node",
    "installs",
    "trust",
    "config",
    "shim",
    "python",
    "home",
    "key",
    "audit",
    "sandbox",
    "mcp",
    "policy",
    "packages",
    "telemetry",
    "warm-start",
]


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class Check(_Wire):
    """One check: what it looked at (``subject``), how it came out and why."""

    name: CheckName
    subject: str | None = None
    status: CheckStatus
    reason: str
    detail: str
    fix: str | None = None
