"""One approval broker per sidecar: every pending question offered to every screen at once.

Contract: :meth:`ApprovalBroker.ask` opens a question with a deadline; the first
:meth:`~ApprovalBroker.answer` that names its id and digest before the deadline wins, and every
later one gets the outcome that says why it lost (``already-answered``, ``stale``,
``expired``, ``withdrawn``, ``unknown-id``); :meth:`~ApprovalBroker.result` tells the asker
what won (or that nobody answered in time: a timeout is No); each listener
(:meth:`~ApprovalBroker.listen`) hears an accepted answer at once, on the thread that gave
it. Thread-safe: the sidecar's
request loop and the approvers' listener threads share one broker. Nothing here approves a
call: the winning answer goes back through the guard, which records it as it records a
dialog's.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from audit.wire import (
    b64url_encode,
    canonical_json,
    format_iso,
    parse_iso,
    sha256_prefixed,
    utc_now,
)
from guard._approvals.model import Answer, AnswerRequest, Approver, Outcome, Pending
from guard._evidence import Fingerprint, Reservation, reserve
from guard._logging import get_logger
from guard._operator import (
    OperatorCredential,
    OperatorReason,
    OperatorSignature,
    check_operator_signature,
    statement_challenge,
)

__all__ = ["ApprovalBroker", "Asked", "Listener", "Signable", "question_digest"]

_log = get_logger("guard.approvals")

_KEEP_CLOSED = 256
_KEEP_RESERVED = 8  # statements per question (a page reloaded, a passkey prompt cancelled)


def question_digest(title: str, message: str, details: str, fingerprint: object) -> str:
    """The digest a screen must name when it answers: what it showed, and the exact call."""
    shown = {"title": title, "message": message, "details": details, "call": fingerprint}
    return sha256_prefixed(canonical_json(shown))


@dataclass
class Asked:
    """A question and what became of it."""

    pending: Pending
    answer: Answer | None = None
    withdrawn: str | None = None
    signable: Signable | None = None
    reservations: dict[str, Reservation] = field(default_factory=dict)
    signed: tuple[Reservation, OperatorSignature] | None = None
    """With a passkey yes: the statement it signed and the signature (already checked)."""


@dataclass(frozen=True)
class Signable:
    """What a passkey needs to sign a yes to one call, fixed by the asker when it asks (on
    its own thread, from its guard): the call's fingerprint, the key that will sign the
    evidence and the enrolled credentials. Reserving and checking then need nothing else,
    so the approval port's threads never touch the guard. The guard checks the signature
    again, against its keyring of that moment, before it mints anything."""

    fingerprint: Fingerprint
    key_id: str
    ttl_seconds: int
    tool_call_id: str | None
    operators: Mapping[str, OperatorCredential]

    def credentials(self) -> tuple[str, ...]:
        return tuple(c.credential_id for c in self.operators.values() if c.status == "active")

    def reserve(self, now: datetime) -> Reservation:
        return reserve(
            self.key_id,
            self.fingerprint,
            ttl_seconds=self.ttl_seconds,
            now=now,
            tool_call_id=self.tool_call_id,
        )

    def check(
        self, reservation: Reservation, signature: OperatorSignature
    ) -> OperatorReason | None:
        return check_operator_signature(reservation.statement, signature, self.operators).reason


Listener = Callable[[str, Answer], None]
"""Hears an accepted answer: the question's id and the answer that won."""


class ApprovalBroker:
    """See the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._listeners: list[Listener] = []
        self._asked: dict[str, Asked] = {}
        self._closed: dict[str, Asked] = {}  # the last questions closed, for state()
        self.version = 0
        """Bumped on every change: a screen that saw ``version`` waits for the next one."""

    def ask(
        self,
        *,
        kind: Literal["call", "effects"],
        title: str,
        message: str,
        details: str,
        digest: str,
        tool_name: str,
        timeout_ms: int,
        tool_call_id: str | None = None,
        session_id: str | None = None,
        grants: tuple[str, ...] = (),
        now: datetime | None = None,
        signable: Signable | None = None,
    ) -> Pending:
        """Open a question; every screen sees it until it is answered, withdrawn or late."""
        start = now or utc_now()
        pending = Pending(
            id="apr_" + b64url_encode(secrets.token_bytes(15)),
            digest=digest,
            kind=kind,
            title=title,
            message=message,
            details=details,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            session_id=session_id,
            created_at_iso=format_iso(start),
            deadline_iso=format_iso(start + timedelta(milliseconds=timeout_ms)),
            grants=list(grants),
        )
        with self._lock:
            self._asked[pending.id] = Asked(pending, signable=signable)
            self._changed()
        return pending

    def statement(self, approval_id: str, digest: str) -> dict[str, object]:
        """Reserve the evidence of question ``approval_id`` for a passkey to sign: the
        statement, its challenge and the credentials that may sign; or ``{"outcome": …}``
        saying why not (as :meth:`answer` would, or ``no-operator``)."""
        now = utc_now()
        with self._lock:
            asked = self._asked.get(approval_id)
            refused = self._refusal(asked, digest, now)
            if refused is not None:
                return {"outcome": refused}
            assert asked is not None
            signable = asked.signable
            credentials = signable.credentials() if signable is not None else ()
            if signable is None or not credentials:
                return {"outcome": "no-operator"}
            reservation = signable.reserve(now)
            asked.reservations[reservation.evidence_id] = reservation
            while len(asked.reservations) > _KEEP_RESERVED:
                asked.reservations.pop(next(iter(asked.reservations)))
            deadline = parse_iso(asked.pending.deadline_iso, "deadlineIso")
            return {
                "outcome": "ready",
                "evidenceId": reservation.evidence_id,
                "statement": reservation.statement,
                "challenge": b64url_encode(statement_challenge(reservation.statement)),
                "rpId": "localhost",
                "allowCredentials": list(credentials),
                "timeoutMs": max(1, int((deadline - now).total_seconds() * 1000)),
            }

    def _refusal(self, asked: Asked | None, digest: str, now: datetime) -> Outcome | None:
        if asked is None:
            return "unknown-id"
        if asked.withdrawn is not None:
            return "withdrawn"
        if asked.answer is not None:
            return "already-answered"
        if digest != asked.pending.digest:
            return "stale"
        if now >= parse_iso(asked.pending.deadline_iso, "deadlineIso"):
            return "expired"
        return None

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with every accepted answer, after the broker let go of its lock
        (a listener may write to a pipe that blocks; it never holds the other screens)."""
        with self._lock:
            self._listeners.append(listener)

    def answer(self, request: AnswerRequest, approver: Approver) -> Outcome:
        """Give an answer from ``approver``; only the first valid one is accepted. A yes
        with ``operatorSignature`` must name a statement this question gave
        (:meth:`statement`) and its signature must verify, else it is refused with the reason.
        The listeners hear an accepted one."""
        outcome, won, listeners = self._answer(request, approver)
        if won is not None:
            for listener in listeners:
                try:
                    listener(request.id, won)
                except Exception:  # a listener's failure is its own; the answer stands
                    _log.exception("approval-listener-failed", id=request.id)
        return outcome

    def _answer(
        self, request: AnswerRequest, approver: Approver
    ) -> tuple[Outcome, Answer | None, tuple[Listener, ...]]:
        now = utc_now()
        with self._lock:
            asked = self._asked.get(request.id)
            refused = self._refusal(asked, request.digest, now)
            if refused is not None:
                return refused, None, ()
            assert asked is not None
            if request.grant is not None and (
                request.decision != "yes" or request.grant >= len(asked.pending.grants)
            ):
                return "stale", None, ()  # a grant this question does not offer
            signature = request.operator_signature
            if signature is not None:
                reservation = asked.reservations.get(request.evidence_id or "")
                signable = asked.signable
                if request.decision != "yes" or reservation is None or signable is None:
                    return "no-operator", None, ()
                failed = signable.check(reservation, signature)
                if failed is not None:
                    return failed, None, ()
                asked.signed = (reservation, signature)
            asked.answer = Answer(
                decision=request.decision,
                approver=approver,
                reason=request.reason,
                grant=request.grant,
                at_iso=format_iso(now),
                operator_credential=signature.credential_id if signature is not None else None,
            )
            self._changed()
            return "accepted", asked.answer, tuple(self._listeners)

    def result(self, approval_id: str) -> Asked | None:
        """The question ``approval_id`` and its answer so far (``None``: no such question)."""
        with self._lock:
            return self._asked.get(approval_id)

    def close(self, approval_id: str, why: str = "answered") -> Asked | None:
        """The asker is done with ``approval_id``: no screen shows it any more; an answer not
        yet given is withdrawn (``why``)."""
        with self._lock:
            asked = self._asked.pop(approval_id, None)
            if asked is not None:
                if asked.answer is None:
                    asked.withdrawn = why
                self._closed[approval_id] = asked
                while len(self._closed) > _KEEP_CLOSED:
                    self._closed.pop(next(iter(self._closed)))
            self._changed()
            return asked

    def state(self, approval_id: str) -> str:
        """What became of ``approval_id``, without answering it: ``open``, ``answered``,
        ``withdrawn``, ``expired`` or ``unknown`` (never asked here, or closed long ago)."""
        with self._lock:
            asked = self._asked.get(approval_id) or self._closed.get(approval_id)
            if asked is None:
                return "unknown"
            if asked.answer is not None:
                return "answered"
            if asked.withdrawn is not None:
                return "withdrawn"
            if utc_now() >= parse_iso(asked.pending.deadline_iso, "deadlineIso"):
                return "expired"
            return "open"

    def withdraw_all(self, why: str) -> list[Asked]:
        """Withdraw every open question (the sidecar stops: a restart approves nothing)."""
        with self._lock:
            gone = list(self._asked.values())
            for asked in gone:
                if asked.answer is None:
                    asked.withdrawn = why
            self._asked.clear()
            self._changed()
            return gone

    def pending(self) -> list[Pending]:
        """The questions still open, oldest first (answered and late ones are not)."""
        now = utc_now()
        with self._lock:
            return [
                a.pending
                for a in self._asked.values()
                if a.answer is None
                and a.withdrawn is None
                and now < parse_iso(a.pending.deadline_iso, "deadlineIso")
            ]

    def wait_change(self, seen: int, timeout: float) -> int:
        """Block until :attr:`version` differs from ``seen`` or ``timeout`` seconds pass."""
        with self._lock:
            self._lock.wait_for(lambda: self.version != seen, timeout)
            return self.version

    def _changed(self) -> None:
        self.version += 1
        self._lock.notify_all()
