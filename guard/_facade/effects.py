"""The effects review on the facade: what a command did, and the operator's answer about
what of it was held."""

from __future__ import annotations

from audit.wire import EffectsResolvedData, EffectsReviewedData, HeldEffectData, utc_now
from guard._approvals import Approver
from guard._effects import Review
from guard._evidence import (
    DEFAULT_TTL_SECONDS,
    Fingerprint,
    RecordResult,
    mint_envelope,
    payload_hash,
)
from guard._facade.core import Core

__all__ = ["Effects"]


class Effects:
    """``effects.reviewed`` and ``effects.resolved`` (a yes mints an effects confirmation)."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def reviewed(
        self, review: Review, layer: str, scope: str, *, tool_call_id: str | None = None
    ) -> None:
        """Audit ``effects.reviewed``: what a command did and what of it is held."""
        counts: dict[str, int] = {}
        for effect in review.effects:
            counts[effect.kind] = counts.get(effect.kind, 0) + 1
        held = [
            HeldEffectData(path=h.effect.path, kind=h.effect.kind, reason=h.reason,
                           files=h.files, bytes=h.bytes)
            for h in review.held[:64]
        ]  # fmt: skip
        self._core.append(
            EffectsReviewedData(
                layer=layer,
                scope=scope,
                tool_call_id=tool_call_id,
                decision=review.decision if review.decision != "partial" else "held",
                digest=review.digest,
                counts=counts,
                held=held,
                held_total=len(review.held),
            )
        )

    def record(
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
        if not confirmed:
            self._core.append(
                EffectsResolvedData(
                    layer=layer,
                    decision="discarded",
                    digest=held.digest,
                    tool_call_id=tool_call_id,
                    reason=reason or "declined",
                    approver=approver,
                )
            )
            return RecordResult(
                decision="declined",
                reasons=(reason or "declined",),
                fingerprint=fp,
                summary="held effects discarded; no evidence minted",
            )
        envelope = mint_envelope(
            self._core.signer(),
            fp,
            origin="runtime-effects-confirm",
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
            approver=approver,
        )
        d = envelope.details
        self._core.append(
            EffectsResolvedData(
                layer=layer,
                decision="applied",
                digest=held.digest,
                tool_call_id=tool_call_id,
                evidence_id=d.evidence_id,
                approver=approver,
            )
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
