"""The wire shapes of the approval port: a pending question, an answer, and the outcome.

Contract: a :class:`Pending` question names its ``digest`` (the SHA-256 of what the operator is
shown: the dialog's text and the call's fingerprint); an :class:`Answer` must name the same
``id`` *and* ``digest``, so an answer given to a stale screen can never approve another call.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field

from audit import WIRE_CONFIG, Approver, IsoMillis, Sha256

__all__ = [
    "APPROVERS",
    "OUTCOMES",
    "Answer",
    "AnswerRequest",
    "Approver",
    "Decision",
    "Outcome",
    "Pending",
]

APPROVERS: tuple[Approver, ...] = get_args(Approver)
Decision = Literal["yes", "no"]
Outcome = Literal["accepted", "unknown-id", "stale", "already-answered", "expired", "withdrawn"]
"""What became of an answer: only the first valid one is ``accepted``."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
ApprovalId = Annotated[str, Field(pattern=r"^apr_[A-Za-z0-9_-]{16,32}$")]
Reason = Annotated[str, Field(max_length=4096)]


class Pending(BaseModel):
    """One question waiting for the operator, exactly as every screen shows it."""

    model_config = WIRE_CONFIG

    id: ApprovalId
    digest: Sha256
    kind: Literal["call", "effects"]
    title: str
    message: str
    details: str
    tool_name: str
    tool_call_id: str | None = None
    session_id: str | None = None
    created_at_iso: IsoMillis
    deadline_iso: IsoMillis
    grants: list[str] = Field(default_factory=list, max_length=2)
    """The grants the dialog offers besides "this call once" (their lines), by number."""


class AnswerRequest(BaseModel):
    """An answer as a screen sends it: the id and digest it was shown, yes or no."""

    model_config = WIRE_CONFIG

    id: ApprovalId
    digest: Sha256
    decision: Decision
    reason: Reason | None = None
    grant: int | None = Field(default=None, ge=0, le=1)
    """With a yes: the question's grant number ``grant`` too (one it offers)."""


class Answer(BaseModel):
    """The answer that won, and who gave it."""

    model_config = WIRE_CONFIG

    decision: Decision
    approver: Approver
    reason: Reason | None = None
    grant: int | None = None
    at_iso: IsoMillis
