"""The session's desk: the questions every screen is offered (the pi dialog, a second
terminal, the page) and their answers, the refusals heard on the screens' threads, and the
grants of this session (``approvals.answer``, ``grants.list``, ``grants.revoke``). An answer
another screen gives is pushed to the shim as it comes (``approvals.answered``, sent by the
sidecar that listens to the broker). What each call was offered and said yes to is the
session's :class:`~guard._sidecar.session.memo.Memo`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audit.wire import utc_now
from guard._approvals import (
    Answer,
    AnswerRequest,
    ApprovalBroker,
    Approver,
    Asked,
    LocalApprovals,
    Signable,
    question_digest,
    sidecar_about,
    sidecar_dirs,
)
from guard._errors import RpcFault
from guard._evidence import Evaluation, Fingerprint
from guard._grants import GrantRecord
from guard._logging import get_logger
from guard._sidecar.framing import RpcCode
from guard._sidecar.session.home import Home
from guard._sidecar.text import grant_line
from guard._sidecar.wire import (
    ApprovalAnswerParams,
    ApprovalRef,
    Dialog,
    EvaluateParams,
    GrantNote,
    GrantsRevokeParams,
)

if TYPE_CHECKING:
    from guard._approvals import ApprovalPage  # the page's HTTP server: only if asked for

__all__ = ["MAX_REFUSAL_KINDS", "Desk", "grant_note"]

_log = get_logger("guard.sidecar")

MAX_REFUSAL_KINDS = 64
"""Distinct (reason, screen, question) refusals kept apart between two calls."""


def grant_note(record: GrantRecord, *, uses: int, use: int | None = None) -> GrantNote:
    """A grant as the shim and ``/guard`` show it (one shape, from its signed record)."""
    return GrantNote(
        grant_id=record.grant_id,
        label=record.label,
        expires_at_iso=record.expires_at_iso,
        max_uses=record.max_uses,
        use=use,
        uses=uses,
    )


class Desk:
    """Open questions and their answers, refusals; this session's grants."""

    def __init__(self, home: Home, session_dir: Path) -> None:
        self.home = home
        self.session_dir = session_dir
        # The approval port: every question offered to every screen (the pi dialog, a second
        # terminal); refusals heard on the listener's thread are audited on this one.
        self.broker = ApprovalBroker()
        self.local: LocalApprovals | None = None
        self.page: ApprovalPage | None = None
        # Refusals heard on other threads, coalesced: (reason, approver, question) -> how many.
        self._refused: dict[tuple[str, Approver, str | None], int] = {}
        self._refused_lock = threading.Lock()

    # -- the screens -------------------------------------------------------------------------

    def start_local(self, about: Callable[[], dict[str, Any]]) -> None:
        """Listen for a second terminal's answers (``pi-guard approvals``); never fails a
        start: without it the pi dialog is the one screen."""
        local = LocalApprovals(self.session_dir, self.broker, self.note_refused, about)
        try:
            local.start()
        except OSError as exc:
            _log.warning("approvals-local-failed", error=str(exc))
            return
        self.local = local

    def start_page(self, workspace: str) -> None:
        """Serve the approval page with this session when the user's policy says so
        (``[approvals] page``); never fails a start (another session may hold the port: its
        page lists this session's questions too)."""
        guard = self.home.guard
        if self.page is not None or guard is None:
            return
        settings = guard.classifier.policy_for(workspace).approvals
        if not settings.page:
            return
        # The page's HTTP server is imported only when the policy asks for the page.
        from guard._approvals import ApprovalPage, enrolled_port

        # Without a port of its own, the page serves where an enrolled passkey signs.
        port = settings.port or enrolled_port(self.home.path) or 0
        page = ApprovalPage(
            self.home.path,
            port=port,
            on_refused=lambda why, ident: self.note_refused(why, ident or "", "web"),
        )
        try:
            page.start()
        except OSError as exc:
            _log.warning("approvals-page-failed", port=port, error=str(exc))
            return
        self.page = page

    def page_elsewhere(self) -> str | None:
        """The address of the approval page another live session of this home runs (this
        one has none: the port was taken), for the stderr line of a waiting headless call."""
        for directory in sidecar_dirs(self.home.path):
            if directory == self.session_dir:
                continue
            page = sidecar_about(directory).get("page")
            if isinstance(page, str):
                return page
        return None

    def close(self) -> None:
        """A sidecar that stops approves nothing: every open question is withdrawn."""
        for asked in self.broker.withdraw_all("sidecar-stopped"):
            _log.info("approval-withdrawn", id=asked.pending.id, tool=asked.pending.tool_name)
        if self.local is not None:
            self.local.close()
        if self.page is not None:
            self.page.close()
        self.audit_refused()

    # -- refusals heard on other threads -----------------------------------------------------

    def note_refused(self, reason: str, approval_id: str, approver: Approver) -> None:
        """Count a refusal heard on another thread. A flood (thousands of bad requests from
        a command that found the page) stays a few records: refusals are coalesced by reason,
        screen and question, and past :data:`MAX_REFUSAL_KINDS` by reason and screen."""
        key = (reason, approver, approval_id or None)
        with self._refused_lock:
            if key not in self._refused and len(self._refused) >= MAX_REFUSAL_KINDS:
                key = (reason, approver, None)
            self._refused[key] = self._refused.get(key, 0) + 1

    def audit_refused(self) -> None:
        """Audit the answers the listener refused since the last call (on this thread), one
        record per kind with how many there were."""
        with self._refused_lock:
            taken, self._refused = self._refused, {}
        guard = self.home.writable
        if guard is None:
            return
        for (reason, approver, approval_id), count in taken.items():
            guard.sessions.approval_refused(reason, approver, approval_id, count=count)

    # -- questions ---------------------------------------------------------------------------

    def open_question(
        self, p: EvaluateParams, evaluation: Evaluation, dialog: Dialog
    ) -> ApprovalRef:
        """Offer call ``p``'s dialog to every screen."""
        fp = evaluation.fingerprint
        fingerprint = fp.model_dump(mode="json") if fp is not None else None
        guard = self.home.need_guard()
        pending = self.broker.ask(
            kind="call",
            title=dialog.title,
            message=dialog.message,
            details=dialog.details,
            digest=question_digest(dialog.title, dialog.message, dialog.details, fingerprint),
            tool_name=p.tool_name,
            timeout_ms=p.confirm_timeout_ms,
            tool_call_id=p.tool_call_id,
            session_id=guard.session["id"] if guard.session is not None else None,
            grants=tuple(dialog.choices.grants),
            signable=self._signable(p, fp),
        )
        return ApprovalRef(id=pending.id, digest=pending.digest)

    def _signable(self, p: EvaluateParams, fp: Fingerprint | None) -> Signable | None:
        """What the page's passkey needs to sign a yes to this call (``None``: no
        authenticator is enrolled, so the page answers without one)."""
        guard = self.home.need_guard()
        operators = guard.public_keyring().operators
        if fp is None or not any(c.status == "active" for c in operators.values()):
            return None
        return Signable(fp, guard.key_id, p.ttl_seconds, p.tool_call_id, operators)

    def settled(self, approval_id: str | None, *, yes: bool) -> Answer | None:
        """Close question ``approval_id`` and give the answer that won (who, and the grant
        chosen with a yes); a yes that no screen gave is refused (the call stays blocked)."""
        self.audit_refused()
        if approval_id is None:
            return None
        asked: Asked | None = self.broker.result(approval_id)
        answer = asked.answer if asked is not None else None
        if yes and (answer is None or answer.decision != "yes"):
            raise RpcFault(
                RpcCode.BAD_INPUT, "no screen answered yes to this question", "not-approved"
            )
        self.broker.close(approval_id)
        return answer

    def answer(self, p: ApprovalAnswerParams) -> dict[str, Any]:
        """pi's dialog answered question ``id``: accepted if it is the first valid answer;
        either way the reply holds the answer that won."""
        self.audit_refused()
        request = AnswerRequest(
            id=p.id, digest=p.digest, decision=p.decision, reason=p.reason, grant=p.grant
        )
        outcome = self.broker.answer(request, "pi-dialog")
        guard = self.home.writable
        if outcome != "accepted" and guard is not None:
            guard.sessions.approval_refused(outcome, "pi-dialog", p.id)
        asked = self.broker.result(p.id)
        won = asked.answer if asked is not None else None
        return {"outcome": outcome, "answer": won.model_dump(mode="json") if won else None}

    # -- this session's grants ---------------------------------------------------------------

    def grants(self) -> dict[str, Any]:
        """The active grants of this session, for ``/guard grants``."""
        guard = self.home.need_guard()
        session = guard.session["id"] if guard.session is not None else None
        now = utc_now()
        notes = [
            grant_note(s.record, uses=s.uses)
            for s in guard.grants.listed(now, session_id=session)
            if session is not None
        ]
        text = "\n".join(
            [
                "operator-guard grants of this session:"
                if notes
                else "operator-guard: no active grants in this session"
            ]
            + [grant_line(n, now) for n in notes]
        )
        return {"grants": [n.model_dump(mode="json") for n in notes], "text": text}

    def revoke(self, p: GrantsRevokeParams) -> dict[str, Any]:
        """Revoke one grant of this session, or all of them (``/guard revoke``)."""
        guard = self.home.need_guard()
        if guard.session is None:
            raise RpcFault(RpcCode.BAD_INPUT, "no pi session in this sidecar", "no-session")
        ended = guard.grants.end(
            "revoked",
            utc_now(),
            session_id=guard.session["id"],
            grant_id=p.grant_id,
            by="guard-command",
        )
        if p.grant_id is not None and not ended:
            raise RpcFault(
                RpcCode.BAD_INPUT, "no such active grant in this session", "unknown-grant"
            )
        ids = [s.record.grant_id for s in ended]
        text = (
            f"operator-guard revoked {len(ids)} grant(s): {', '.join(ids)}"
            if ids
            else "operator-guard: no active grants to revoke"
        )
        return {"revoked": ids, "text": text}
