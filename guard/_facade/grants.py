"""Scoped grants on the facade: what a dialog may offer, keeping one, covering a call, and
listing and ending them.

Contract: a grant belongs to the pi session the core names (none without one); the desk
(:class:`guard._grants.GrantDesk`) signs, stores and audits them, and a covered call's
evidence is minted by :class:`guard._facade.calls.Calls` on the call's own classification.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from audit.wire import GrantUsedData, utc_now
from guard._errors import BadInputError
from guard._evidence import DEFAULT_TTL_SECONDS, CoveredBy, RecordResult
from guard._facade.calls import Calls
from guard._facade.consumer import ClassifiedCall
from guard._facade.core import Core
from guard._facade.fields import preview_of
from guard._grants import (
    GrantDesk,
    GrantLimits,
    GrantOffer,
    GrantRecord,
    GrantState,
    GrantStore,
)
from guard._grants import offers as derive_offers
from guard._home import GRANTS_FILE

__all__ = ["Grants"]


class Grants:
    """The grants of this pi session (:attr:`desk` signs, stores and audits them)."""

    def __init__(self, core: Core, calls: Calls) -> None:
        self._core = core
        self._calls = calls
        self.desk = GrantDesk(
            GrantStore(core.home / GRANTS_FILE), core.signer, core.public_keyring, core.append
        )

    def listed(self, now: datetime, *, session_id: str | None = None) -> list[GrantState]:
        """The grants still active, oldest first, of one session or all (the desk's)."""
        return self.desk.listed(now, session_id=session_id)

    def end(
        self,
        reason: Literal["revoked", "session-ended"],
        now: datetime,
        *,
        session_id: str | None = None,
        grant_id: str | None = None,
        by: Literal["guard-command", "cli"] | None = None,
    ) -> list[GrantState]:
        """End the active grants of ``session_id`` (or the one ``grant_id``, or all), each
        audited; returns those ended (the desk's)."""
        return self.desk.end(reason, now, session_id=session_id, grant_id=grant_id, by=by)

    def policy_digest(self, workspace: str | os.PathLike[str]) -> str:
        """The digest of the policy in force for ``workspace`` (without the machine's state)."""
        return self._core.classifier.policy_for(workspace).digest()

    def limits(self, workspace: str | os.PathLike[str]) -> GrantLimits:
        """What the policy in force for ``workspace`` lets a new grant be (``[grants]``)."""
        settings = self._core.classifier.policy_for(workspace).grants
        return GrantLimits(settings.enabled, settings.max_minutes, settings.max_uses)

    def offers(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
    ) -> tuple[GrantOffer, ...]:
        """The grants a dialog about this call may offer (:meth:`offers_call`)."""
        if self._core.session is None or not self.limits(workspace).enabled:
            return ()  # no call to judge
        return self.offers_call(
            self._calls.classify(tool_name, tool_input, cwd), workspace=workspace
        )

    def offers_call(
        self, call: ClassifiedCall, *, workspace: str | os.PathLike[str]
    ) -> tuple[GrantOffer, ...]:
        """The grants a dialog about this classified call may offer (none without a pi
        session, with grants switched off, or for a call :func:`guard._grants.offers`
        refuses)."""
        if self._core.session is None or not self.limits(workspace).enabled:
            return ()
        return derive_offers(call.name, call.input, call.cwd, call.verdict, workspace=workspace)

    def create(
        self,
        offer: GrantOffer,
        evidence_id: str,
        *,
        workspace: str | os.PathLike[str],
    ) -> GrantRecord:
        """Keep ``offer`` as a signed grant of this pi session (audited ``grant.created``);
        ``evidence_id`` is the evidence of the dialog's own call."""
        if self._core.session is None:
            raise BadInputError("no-session", "a grant needs a pi session")
        return self.desk.create(
            offer,
            session_id=self._core.session["id"],
            evidence_id=evidence_id,
            limits=self.limits(workspace),
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
        if self._core.session is None:
            return None  # no call to judge
        return self.covered_call(
            self._calls.classify(tool_name, tool_input, cwd),
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
        if self._core.session is None:
            return None
        cover = self.desk.cover(
            call.name,
            call.input,
            call.cwd,
            call.verdict,
            session_id=self._core.session["id"],
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
        result = self._calls.record_call(
            call,
            confirmed=True,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            covered_by=covered_by,
        )
        if result.evidence_id is None:
            return None
        preview = preview_of(call.name, call.input, call.verdict)
        self._core.append(
            GrantUsedData(
                grant_id=cover.grant.grant_id,
                use=cover.use,
                evidence_id=result.evidence_id,
                tool_call_id=tool_call_id,
                preview=preview if preview and self._core.preview else None,
            )
        )
        return result

    def end_session(self) -> None:
        """End this pi session's grants (a grant never outlives its session)."""
        if self._core.session is not None:
            self.desk.end("session-ended", utc_now(), session_id=self._core.session["id"])
