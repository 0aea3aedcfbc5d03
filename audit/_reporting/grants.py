"""Scoped grants as the log tells them: each grant's tally while the records are read,
one :class:`~audit._reporting.rows.GrantRow` at the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from audit._records.log_events import (
    GrantCreatedData,
    GrantExpiredData,
    GrantRevokedData,
    GrantUsedData,
)
from audit._records.models import AuditRecord
from audit._reporting.rows import GrantEnd, GrantRow, typed
from audit._reporting.show import session_of

__all__ = ["GRANT_EVENTS", "GrantTally", "grant_event", "tally_of"]

GRANT_EVENTS = ("grant.created", "grant.used", "grant.revoked", "grant.expired")


@dataclass(slots=True)
class GrantTally:
    """A grant's row while the records are read (see :class:`GrantRow`)."""

    grant_id: str
    session: str | None
    created: GrantCreatedData | None = None
    created_seq: int | None = None
    covered: int = 0
    ran: int = 0
    uses: int = 0
    ended: GrantEnd | None = None
    ended_by: Literal["cli", "guard-command"] | None = None
    ended_seq: int | None = None

    def row(self) -> GrantRow:
        made = self.created
        return GrantRow(
            grant_id=self.grant_id,
            session=self.session,
            label=None if made is None else made.label,
            breadth=None if made is None else made.breadth,
            scope=None if made is None else made.pattern.scope,
            globs=() if made is None else tuple(made.pattern.globs),
            created_seq=self.created_seq,
            created_at_iso=None if made is None else made.created_at_iso,
            expires_at_iso=None if made is None else made.expires_at_iso,
            max_uses=None if made is None else made.max_uses,
            evidence_id=None if made is None else made.evidence_id,
            covered=self.covered,
            ran=self.ran,
            uses=self.uses,
            ended=self.ended,
            ended_by=self.ended_by,
            ended_seq=self.ended_seq,
        )


def tally_of(grants: dict[str, GrantTally], grant_id: str, record: AuditRecord) -> GrantTally:
    """The tally of ``grant_id``, started at the first record that names it."""
    found = grants.get(grant_id)
    if found is None:
        found = grants[grant_id] = GrantTally(grant_id, session_of(record))
    return found


def grant_event(grants: dict[str, GrantTally], record: AuditRecord) -> None:
    """What one ``grant.*`` record says about its grant."""
    if record.event == "grant.created":
        made = typed(record, GrantCreatedData)
        tally = tally_of(grants, made.grant_id, record)
        tally.session = session_of(record) or tally.session
        tally.created, tally.created_seq = made, record.seq
    elif record.event == "grant.used":
        used = typed(record, GrantUsedData)
        tally = tally_of(grants, used.grant_id, record)
        tally.uses = max(tally.uses, used.use)
    elif record.event == "grant.revoked":
        revoked = typed(record, GrantRevokedData)
        tally = tally_of(grants, revoked.grant_id, record)
        tally.uses = max(tally.uses, revoked.uses)
        if tally.ended is None:  # the first end is the grant's end
            tally.ended, tally.ended_by, tally.ended_seq = "revoked", revoked.by, record.seq
    else:
        expired = typed(record, GrantExpiredData)
        tally = tally_of(grants, expired.grant_id, record)
        tally.uses = max(tally.uses, expired.uses)
        if tally.ended is None:
            tally.ended, tally.ended_seq = expired.reason, record.seq
