"""The wire shapes of the approval port: a pending question, an answer, and the outcome.

Contract: a :class:`Pending` question names its ``digest`` (the SHA-256 of what the operator is
shown: the dialog's text and the call's fingerprint); an :class:`Answer` must name the same
``id`` *and* ``digest``, so an answer given to a stale screen can never approve another call.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG, Approver, EvidenceId, IsoMillis, Sha256
from guard._operator import OperatorSignature

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
Outcome = Literal[
    "accepted",
    "unknown-id",
    "stale",
    "already-answered",
    "expired",
    "withdrawn",
    "no-operator",
    "operator-unknown-credential",
    "operator-credential-removed",
    "operator-malformed",
    "operator-wrong-type",
    "operator-challenge-mismatch",
    "operator-wrong-origin",
    "operator-wrong-rp-id",
    "operator-not-present",
    "operator-not-verified",
    "operator-sign-count",
    "operator-signature-invalid",
]
"""What became of an answer: only the first valid one is ``accepted``. A passkey answer whose
signature does not verify gets the consumer's reason for it (``operator-…``); one for a
question no statement was given for, or with no authenticator enrolled, ``no-operator``."""
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
    evidence_id: EvidenceId | None = None
    """With ``operatorSignature``: the statement (``op: statement``) the passkey signed."""
    operator_signature: OperatorSignature | None = None
    """A yes signed by the operator's enrolled authenticator (the page's passkey)."""


class Answer(BaseModel):
    """The answer that won, and who gave it."""

    model_config = WIRE_CONFIG

    decision: Decision
    approver: Approver
    reason: Reason | None = None
    grant: int | None = None
    at_iso: IsoMillis
    operator_credential: str | None = None
    """The enrolled authenticator that signed this yes, when one did."""
