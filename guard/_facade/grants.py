"""Scoped grants on the facade: what a dialog may offer, keeping one, and covering a call."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from audit.wire import GrantUsedData, utc_now
from guard._errors import BadInputError
from guard._evidence import DEFAULT_TTL_SECONDS, CoveredBy, RecordResult
from guard._facade.base import GuardBase, preview_of
from guard._facade.consumer import ClassifiedCall
from guard._grants import GrantLimits, GrantOffer, GrantRecord, offers

__all__ = ["GrantsPart"]


class GrantsPart(GuardBase):
    """The grants of this pi session (:attr:`grants` is the desk that signs and stores them)."""

    def policy_digest(self, workspace: str | os.PathLike[str]) -> str:
        """The digest of the policy in force for ``workspace`` (without the machine's state)."""
        return self.classifier.policy_for(workspace).digest()

    def grant_limits(self, workspace: str | os.PathLike[str]) -> GrantLimits:
        """What the policy in force for ``workspace`` lets a new grant be (``[grants]``)."""
        settings = self.classifier.policy_for(workspace).grants
        return GrantLimits(settings.enabled, settings.max_minutes, settings.max_uses)

    def grant_offers(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
    ) -> tuple[GrantOffer, ...]:
        """The grants a dialog about this call may offer (:meth:`grant_offers_call`)."""
        if self.session is None or not self.grant_limits(workspace).enabled:
            return ()  # no call to judge
        return self.grant_offers_call(
            self.classify(tool_name, tool_input, cwd), workspace=workspace
        )

    def grant_offers_call(
        self, call: ClassifiedCall, *, workspace: str | os.PathLike[str]
    ) -> tuple[GrantOffer, ...]:
        """The grants a dialog about this classified call may offer (none without a pi
        session, with grants switched off, or for a call :func:`guard._grants.offers`
        refuses)."""
        if self.session is None or not self.grant_limits(workspace).enabled:
            return ()
        return offers(call.name, call.input, call.cwd, call.verdict, workspace=workspace)

    def create_grant(
        self,
        offer: GrantOffer,
        evidence_id: str,
        *,
        workspace: str | os.PathLike[str],
    ) -> GrantRecord:
        """Keep ``offer`` as a signed grant of this pi session (audited ``grant.created``);
        ``evidence_id`` is the evidence of the dialog's own call."""
        if self.session is None:
            raise BadInputError("no-session", "a grant needs a pi session")
        return self.grants.create(
            offer,
            session_id=self.session["id"],
            evidence_id=evidence_id,
            limits=self.grant_limits(workspace),
            policy_digest=self.policy_digest(workspace),
            now=utc_now(),
        )

    def covered(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
    ) -> RecordResult | None:
        """If a grant of this pi session covers the call: :meth:`covered_call`."""
        if self.session is None:
            return None  # no call to judge
        return self.covered_call(
            self.classify(tool_name, tool_input, cwd),
            workspace=workspace,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
        )

    def covered_call(
        self,
        call: ClassifiedCall,
        *,
        workspace: str | os.PathLike[str],
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
    ) -> RecordResult | None:
        """If a grant of this pi session covers the classified call: its own evidence (origin
        ``runtime-grant``, ``coveredBy`` the grant, minted on that same classification),
        audited with ``grant.used``; else ``None`` and the call gets the normal dialog."""
        if self.session is None:
            return None
        cover = self.grants.cover(
            call.name,
            call.input,
            call.cwd,
            call.verdict,
            session_id=self.session["id"],
            policy_digest=self.policy_digest(workspace),
            now=utc_now(),
        )
        if cover is None:
            return None
        covered_by = CoveredBy(
            grant_id=cover.grant.grant_id,
            use=cover.use,
            grant_evidence_id=cover.grant.evidence_id,
        )
        result = self.record_call(
            call,
            confirmed=True,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            covered_by=covered_by,
        )
        if result.evidence_id is None:
            return None
        preview = preview_of(call.name, call.input, call.verdict)
        self._append(
            GrantUsedData(
                grant_id=cover.grant.grant_id,
                use=cover.use,
                evidence_id=result.evidence_id,
                tool_call_id=tool_call_id,
                preview=preview if preview and self._preview else None,
            )
        )
        return result

    def end_grants(self, reason: Literal["session-ended"]) -> None:
        """End this pi session's grants (a grant never outlives its session)."""
        if self.session is not None:
            self.grants.end(reason, utc_now(), session_id=self.session["id"])
