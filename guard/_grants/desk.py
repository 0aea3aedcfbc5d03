"""The grants of one guard home as the guard uses them: offer, create, cover, end, revoke.

Contract: a :class:`GrantDesk` is given the guard's signer and keyring (asked each time, so a
rotated key is seen) and its audit append; it never mints evidence itself (the guard does,
with the ``covered_by`` this desk returns). Every decision reads the grants file afresh
under its lock: a grant covers a call only if its signed line verifies, it belongs to the
asking pi session, its key is the active one, the policy digest is the one it was made
under, it has time and uses left, and :func:`guard._grants.covers` says the call is inside
its pattern. A grant found spent is ended once (``grant.expired``) the first time it is seen.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from audit import shorten
from audit.wire import (
    AuditRecord,
    EventData,
    GrantCreatedData,
    GrantExpiredData,
    GrantPatternData,
    GrantRevokedData,
    canonical_json,
    format_iso,
    parse_iso,
    sha256_prefixed,
)
from guard._evidence import PublicKeyring, Signer
from guard._grants.facts import CallFacts, Refusal, call_facts
from guard._grants.match import covers
from guard._grants.model import GrantOffer
from guard._grants.store import (
    EndReason,
    GrantRecord,
    GrantState,
    GrantStore,
    Unusable,
    new_grant_id,
)
from guard._policy import Verdict

__all__ = ["Cover", "GrantDesk", "GrantLimits"]

_END_OF: dict[Unusable, EndReason] = {
    "expired": "time",
    "used-up": "uses",
    "key-rotated": "key-rotated",
    "policy-changed": "policy-changed",
}


@dataclass(frozen=True)
class GrantLimits:
    """What the policy allows a new grant: on or off, its longest life and most uses."""

    enabled: bool
    max_minutes: int
    max_uses: int


@dataclass(frozen=True)
class Cover:
    """A call covered by ``grant`` as its use number ``use`` (already counted)."""

    grant: GrantRecord
    use: int


class GrantDesk:
    """See the module docstring."""

    def __init__(
        self,
        store: GrantStore,
        signer: Callable[[], Signer],
        keyring: Callable[[], PublicKeyring],
        append: Callable[[EventData], AuditRecord],
    ) -> None:
        self.store = store
        self._signer = signer
        self._keyring = keyring
        self._append = append
        self.problem: str | None = None
        """Why the grants file was last refused (every grant then asks), if it was."""

    @contextmanager
    def _states(self) -> Iterator[dict[str, GrantState]]:
        with self.store.locked():
            loaded = self.store.load(self._keyring())
            self.problem = loaded.problem
            yield {} if loaded.problem else loaded.grants

    def create(
        self,
        offer: GrantOffer,
        *,
        session_id: str,
        evidence_id: str,
        limits: GrantLimits,
        policy_digest: str,
        now: datetime,
    ) -> GrantRecord:
        """Keep a new grant from ``offer`` (signed) and audit ``grant.created``."""
        signer = self._signer()
        expires = now + timedelta(minutes=limits.max_minutes)
        record = self.store.create(
            {
                "grantId": new_grant_id(),
                "sessionId": session_id,
                "pattern": offer.pattern.model_dump(mode="json"),
                "breadth": offer.breadth,
                "label": offer.label,
                "createdAtIso": format_iso(now),
                "expiresAtIso": format_iso(expires),
                "maxUses": limits.max_uses,
                "evidenceId": evidence_id,
                "policyDigest": policy_digest,
                "dispatchAllowed": False,
                "canOverrideMonitorBlock": False,
                "authorization": "none",
            },
            signer,
        )
        line = record.model_dump(mode="json", by_alias=True)
        self._append(
            GrantCreatedData(
                grant_id=record.grant_id,
                pattern=GrantPatternData.model_validate(offer.pattern.model_dump(mode="json")),
                breadth=record.breadth,
                label=shorten(record.label, 1024),
                created_at_iso=record.created_at_iso,
                expires_at_iso=record.expires_at_iso,
                max_uses=record.max_uses,
                evidence_id=record.evidence_id,
                policy_digest=record.policy_digest,
                key_id=record.key_id,
                record_hash=sha256_prefixed(canonical_json(line)),
            )
        )
        return record

    def cover(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        verdict: Verdict,
        *,
        session_id: str | None,
        policy_digest: str,
        now: datetime,
    ) -> Cover | None:
        """The grant that covers this call, its use counted (``grant.used`` is the guard's,
        once the call's evidence exists); ``None``: the call gets a dialog."""
        if session_id is None or verdict.verdict != "confirm":
            return None
        signer = self._signer()
        found: Cover | None = None
        spent: list[GrantState] = []
        # The call is analysed once, for the first grant that may cover it, not once a grant.
        facts: CallFacts | Refusal | None = None
        with self._states() as states:
            for state in states.values():
                unusable = state.usable(session_id, now, signer.key_id, policy_digest)
                if unusable in _END_OF and state.record.session_id == session_id:
                    self._end(state, _END_OF[unusable], signer, now)
                    spent.append(state)
                if unusable is not None or found is not None:
                    continue
                if facts is None:
                    facts = call_facts(tool_name, tool_input, os.fspath(cwd), verdict)
                pattern = state.record.pattern
                if covers(pattern, tool_name, tool_input, cwd, verdict, facts=facts).covered:
                    found = Cover(state.record, state.uses + 1)
                    self.store.mark(state.record.grant_id, "used", signer, now, use=found.use)
        self._audit_ends(spent)
        return found

    def _end(
        self,
        state: GrantState,
        reason: EndReason,
        signer: Signer,
        now: datetime,
        by: Literal["guard-command", "cli"] | None = None,
    ) -> None:
        kind: Literal["revoked", "expired"] = "revoked" if reason == "revoked" else "expired"
        self.store.mark(state.record.grant_id, kind, signer, now, reason=reason, by=by)
        state.ended = reason

    def end(
        self,
        reason: EndReason,
        now: datetime,
        *,
        session_id: str | None = None,
        grant_id: str | None = None,
        by: Literal["guard-command", "cli"] | None = None,
    ) -> list[GrantState]:
        """End the active grants of ``session_id`` (or the one ``grant_id``, or all of them
        when both are ``None``) for ``reason``, each audited; returns those ended."""
        signer = self._signer()
        ended: list[GrantState] = []
        with self._states() as states:
            for state in states.values():
                record = state.record
                if not state.active or (grant_id is not None and record.grant_id != grant_id):
                    continue
                if session_id is not None and record.session_id != session_id:
                    continue
                self._end(state, reason, signer, now, by if reason == "revoked" else None)
                ended.append(state)
        self._audit_ends(ended, by=by)
        return ended

    def _audit_ends(
        self, ended: list[GrantState], *, by: Literal["guard-command", "cli"] | None = None
    ) -> None:
        for state in ended:
            grant_id, uses = state.record.grant_id, state.uses
            if state.ended == "revoked":
                self._append(GrantRevokedData(grant_id=grant_id, by=by or "cli", uses=uses))
            else:
                self._append(GrantExpiredData(grant_id=grant_id, reason=state.ended, uses=uses))

    def listed(self, now: datetime, *, session_id: str | None = None) -> list[GrantState]:
        """The grants still active (time and uses left, not ended), oldest first, of one
        session or all."""
        with self._states() as states:
            found = [
                s
                for s in states.values()
                if s.active
                and (session_id is None or s.record.session_id == session_id)
                and now < _expires(s.record)
                and s.uses < s.record.max_uses
            ]
        return sorted(found, key=lambda s: s.record.created_at_iso)


def _expires(record: GrantRecord) -> datetime:
    return parse_iso(record.expires_at_iso, "expiresAtIso")
