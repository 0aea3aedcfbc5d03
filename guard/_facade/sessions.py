"""Sessions on the facade: a pi session started and ended, and what a screen or the
allowlist proxy refused during it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from audit import shorten
from audit.wire import canonical_json, sha256_prefixed
from guard._approvals import Approver
from guard._facade.grants import GrantsPart

__all__ = ["SessionsPart"]


class SessionsPart(GrantsPart):
    """``session.started``/``session.ended`` (a session's grants end with it), refusals."""

    def session_started(
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
        fields: dict[str, Any] = {
            "sandbox": sandbox,
            "scope": scope,
            "sidecarRestarted": sidecar_restarted,
            "policyDigest": sha256_prefixed(
                canonical_json(self.classifier.policy_for(scope).describe())
            ),
        }
        if mode in ("tui", "rpc", "json", "print"):
            fields["mode"] = mode
        if network is not None and sandbox == "sandboxed":
            fields["network"] = network
        if reason:
            fields["reason"] = reason
        if message and sandbox != "sandboxed":
            fields["message"] = shorten(message, 1024)
        if pi_version:
            fields["piVersion"] = shorten(pi_version, 64)
        if tools:
            fields["tools"] = [dict(t) for t in tools[:512]]
        self._append("session.started", fields)

    def session_ended(self, reason: Literal["shutdown", "switched"]) -> None:
        """End the session's grants, then audit ``session.ended`` with what happened in it
        (:attr:`session_counts`)."""
        self.end_grants("session-ended")
        self._append("session.ended", {"reason": reason, **self.session_counts})

    def approval_refused(
        self, reason: str, approver: Approver, approval_id: str | None, *, count: int = 1
    ) -> None:
        """Audit ``approval.refused``: a screen's answer lost or was not the operator's
        (``count`` times, coalesced)."""
        data: dict[str, Any] = {"reason": reason, "approver": approver}
        if approval_id:
            data["approvalId"] = shorten(approval_id, 64)
        if count > 1:
            data["count"] = count
        self._append("approval.refused", data)

    def network_refused(self, host: str, port: int, reason: str, scope: str) -> None:
        """Audit ``network.refused``: the allowlist proxy refused an agent command's request."""
        self._append(
            "network.refused",
            {"host": shorten(host, 253) or "?", "port": port, "reason": reason, "scope": scope},
        )
