"""The effects review on the facade: what a command did, and the operator's answer about
what of it was held."""

from __future__ import annotations

from typing import Any

from audit.wire import utc_now
from guard._approvals import Approver
from guard._effects import Review
from guard._evidence import (
    DEFAULT_TTL_SECONDS,
    Fingerprint,
    RecordResult,
    mint_envelope,
    payload_hash,
)
from guard._facade.base import GuardBase

__all__ = ["EffectsPart"]


class EffectsPart(GuardBase):
    """``effects.reviewed`` and ``effects.resolved`` (a yes mints an effects confirmation)."""

    def effects_reviewed(
        self, review: Review, layer: str, scope: str, *, tool_call_id: str | None = None
    ) -> None:
        """Audit ``effects.reviewed``: what a command did and what of it is held."""
        counts: dict[str, int] = {}
        for effect in review.effects:
            counts[effect.kind] = counts.get(effect.kind, 0) + 1
        held = [
            {"path": h.effect.path, "kind": h.effect.kind, "reason": h.reason,
             "files": h.files, "bytes": h.bytes}
            for h in review.held[:64]
        ]  # fmt: skip
        data: dict[str, Any] = {
            "layer": layer,
            "scope": scope,
            "decision": review.decision if review.decision != "partial" else "held",
            "counts": counts,
            "held": held,
            "heldTotal": len(review.held),
        }
        if review.digest is not None:
            data["digest"] = review.digest
        if tool_call_id is not None:
            data["toolCallId"] = tool_call_id
        self._append("effects.reviewed", data)

    def record_effects(
        self,
        held: Review,
        layer: str,
        scope: str,
        command: str,
        *,
        confirmed: bool,
        tool_call_id: str | None = None,
        reason: str | None = None,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        approver: Approver | None = None,
    ) -> RecordResult:
        """The operator's answer about held effects; a yes mints an effects confirmation.

        The evidence (origin ``runtime-effects-confirm``, kind ``destructive``) is bound to
        the command and the digest of the held effect list: its payload hash is over
        ``{"command", "layer", "effects"}`` (RFC 8785), the layer's ``effects.reviewed``
        record holding the list. Audited as ``effects.resolved``.
        """
        assert held.digest is not None
        fp = Fingerprint(
            action_kind="destructive",
            tool_name="bash",
            path=None,
            scope=scope,
            payload_hash=payload_hash({"command": command, "layer": layer, "effects": held.digest}),
        )
        call = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        base = {"layer": layer, "digest": held.digest, **call}
        if approver is not None:
            base["approver"] = approver
        if not confirmed:
            self._append(
                "effects.resolved",
                {**base, "decision": "discarded", "reason": reason or "declined"},
            )
            return RecordResult(
                decision="declined",
                reasons=(reason or "declined",),
                fingerprint=fp,
                summary="held effects discarded; no evidence minted",
            )
        envelope = mint_envelope(
            self._current_signer(),
            fp,
            origin="runtime-effects-confirm",
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
            approver=approver,
        )
        d = envelope.details
        self._append(
            "effects.resolved", {**base, "decision": "applied", "evidenceId": d.evidence_id}
        )
        return RecordResult(
            decision="recorded",
            reasons=(),
            evidence_id=d.evidence_id,
            expires_at_iso=d.expires_at_iso,
            envelope=envelope,
            fingerprint=fp,
            summary=f"effects confirmed: {d.evidence_id}; report-only",
        )
