"""The approval port on the sidecar: the questions every screen is offered (the pi dialog,
a second terminal, the page) and their answers, and the grants of this session
(``approvals.poll``, ``approvals.answer``, ``grants.list``, ``grants.revoke``).
"""

from __future__ import annotations

import os
from typing import Any

from audit.wire import utc_now
from guard._approvals import (
    AnswerRequest,
    LocalApprovals,
    Signable,
    question_digest,
    sidecar_about,
    sidecar_dirs,
)
from guard._errors import RpcFault
from guard._evidence import Evaluation, Fingerprint
from guard._logging import get_logger
from guard._sidecar.framing import RpcCode
from guard._sidecar.handlers.state import SidecarState, grant_note
from guard._sidecar.text import grant_line
from guard._sidecar.wire import (
    ApprovalAnswerParams,
    ApprovalPollParams,
    ApprovalRef,
    Dialog,
    EvaluateParams,
    GrantsRevokeParams,
    NoParams,
)

__all__ = ["DeskPart"]

_log = get_logger("guard.sidecar")


class DeskPart(SidecarState):
    """Open questions and their answers; this session's grants."""

    def _start_local(self) -> None:
        """Listen for a second terminal's answers (``pi-guard approvals``); never fails a
        start: without it the pi dialog is the one screen."""
        local = LocalApprovals(self._session_dir, self._broker, self._note_refused, self._about)
        try:
            local.start()
        except OSError as exc:
            _log.warning("approvals-local-failed", error=str(exc))
            return
        self._local = local

    def _about(self) -> dict[str, Any]:
        """Whose questions these are, for a screen outside pi (op ``about``, on the
        listener's thread: reads only): pi's session id, its folder, this sidecar's page."""
        guard = self._guard
        session = guard.session if guard is not None else None
        return {
            "pid": os.getpid(),
            "sessionId": session.get("id") if session is not None else None,
            "cwd": self._sandbox.cwd if self._sandbox is not None else None,
            "page": self._page.url if self._page is not None else None,
        }

    def _page_elsewhere(self) -> str | None:
        """The address of the approval page another live session of this home runs (this
        one has none: the port was taken), for the stderr line of a waiting headless call."""
        for directory in sidecar_dirs(self.home):
            if directory == self._session_dir:
                continue
            page = sidecar_about(directory).get("page")
            if isinstance(page, str):
                return page
        return None

    def _start_page(self, workspace: str) -> None:
        """Serve the approval page with this session when the user's policy says so
        (``[approvals] page``); never fails a start (another session may hold the port: its
        page lists this session's questions too)."""
        if self._page is not None or self._guard is None:
            return
        settings = self._guard.classifier.policy_for(workspace).approvals
        if not settings.page:
            return
        # The page's HTTP server is imported only when the policy asks for the page.
        from guard._approvals import ApprovalPage, enrolled_port

        # Without a port of its own, the page serves where an enrolled passkey signs.
        port = settings.port or enrolled_port(self.home) or 0
        page = ApprovalPage(
            self.home,
            port=port,
            on_refused=lambda why, ident: self._note_refused(why, ident or "", "web"),
        )
        try:
            page.start()
        except OSError as exc:
            _log.warning("approvals-page-failed", port=port, error=str(exc))
            return
        self._page = page

    def _open_question(
        self, p: EvaluateParams, evaluation: Evaluation, dialog: Dialog
    ) -> ApprovalRef:
        fp = evaluation.fingerprint
        fingerprint = fp.model_dump(mode="json") if fp is not None else None
        guard = self._need_guard()
        pending = self._broker.ask(
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
        guard = self._need_guard()
        operators = guard.public_keyring().operators
        if fp is None or not any(c.status == "active" for c in operators.values()):
            return None
        return Signable(fp, guard.key_id, p.ttl_seconds, p.tool_call_id, operators)

    def _approvals_poll(self, p: ApprovalPollParams) -> dict[str, Any]:
        """Whether another screen answered question ``id`` (the shim then closes its dialog)."""
        self._audit_refused()
        asked = self._broker.result(p.id)
        if asked is None:
            raise RpcFault(RpcCode.BAD_INPUT, "no such question", "unknown-approval")
        answer = asked.answer.model_dump(mode="json") if asked.answer is not None else None
        return {"open": asked.answer is None and asked.withdrawn is None, "answer": answer}

    def _approvals_answer(self, p: ApprovalAnswerParams) -> dict[str, Any]:
        """pi's dialog answered question ``id``: accepted if it is the first valid answer;
        either way the reply holds the answer that won."""
        self._audit_refused()
        request = AnswerRequest(
            id=p.id, digest=p.digest, decision=p.decision, reason=p.reason, grant=p.grant
        )
        outcome = self._broker.answer(request, "pi-dialog")
        if outcome != "accepted" and self._guard is not None and self._damage is None:
            self._guard.approval_refused(outcome, "pi-dialog", p.id)
        asked = self._broker.result(p.id)
        won = asked.answer if asked is not None else None
        return {"outcome": outcome, "answer": won.model_dump(mode="json") if won else None}

    def _grants_list(self, _: NoParams) -> dict[str, Any]:
        """The active grants of this session, for ``/guard grants``."""
        guard = self._need_guard()
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

    def _grants_revoke(self, p: GrantsRevokeParams) -> dict[str, Any]:
        """Revoke one grant of this session, or all of them (``/guard revoke``)."""
        guard = self._need_guard()
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
