"""Sessions on the facade: a pi session started and ended, and what a screen or the
allowlist proxy refused during it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from audit import shorten
from audit.wire import (
    ApprovalRefusedData,
    NetworkRefusedData,
    SessionEndedData,
    SessionStartedData,
)
from guard._approvals import Approver
from guard._facade.core import Core
from guard._facade.grants import Grants

__all__ = ["Sessions"]

_MODES: tuple[str, ...] = get_args(get_args(SessionStartedData.model_fields["mode"].annotation)[0])
"""How pi may run, as ``session.started`` records it (``tui``, ``rpc``, ``json``, ``print``)."""


class Sessions:
    """``session.started``/``session.ended`` (a session's grants end with it), refusals.

    Which pi session the records name is the core's (:meth:`guard._facade.core.Core.attribute`).
    """

    def __init__(self, core: Core, grants: Grants) -> None:
        self._core = core
        self._grants = grants

    def started(
        self,
        scope: str,
        sandbox: Literal["sandboxed", "unsandboxed", "unavailable"],
        *,
        reason: str | None = None,
        message: str | None = None,
        pi_version: str | None = None,
        sidecar_restarted: bool = False,
        mode: str | None = None,
        network: str | None = None,
        tools: Sequence[Mapping[str, str]] = (),
    ) -> None:
        """Audit ``session.started``: a sidecar took over a pi session, its sandbox state and
        the digest of the policy in force for it."""
        sandboxed = sandbox == "sandboxed"
        self._core.append(
            SessionStartedData(
                sandbox=sandbox,
                scope=scope,
                sidecar_restarted=sidecar_restarted,
                policy_digest=self._core.classifier.policy_for(scope).digest(),
                mode=mode if mode in _MODES else None,
                network=network if sandboxed else None,
                reason=reason or None,
                message=shorten(message, 1024) if message and not sandboxed else None,
                pi_version=shorten(pi_version, 64) if pi_version else None,
                tools=[dict(t) for t in tools[:512]] or None,
            )
        )

    def ended(self, reason: Literal["shutdown", "switched"]) -> None:
        """End the session's grants, then audit ``session.ended`` with what happened in it
        (the core's ``session_counts``)."""
        self._grants.end_session()
        self._core.append(SessionEndedData(reason=reason, **self._core.session_counts))

    def approval_refused(
        self, reason: str, approver: Approver, approval_id: str | None, *, count: int = 1
    ) -> None:
        """Audit ``approval.refused``: a screen's answer lost or was not the operator's
        (``count`` times, coalesced)."""
        self._core.append(
            ApprovalRefusedData(
                reason=reason,
                approver=approver,
                approval_id=shorten(approval_id, 64) if approval_id else None,
                count=count if count > 1 else None,
            )
        )

    def network_refused(self, host: str, port: int, reason: str, scope: str) -> None:
        """Audit ``network.refused``: the allowlist proxy refused an agent command's request."""
        self._core.append(
            NetworkRefusedData(
                host=shorten(host, 253) or "?", port=port, reason=reason, scope=scope
            )
        )
