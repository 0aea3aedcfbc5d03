"""The effects review on the sidecar (``effects.review``, ``effects.resolve``): what an agent
command did, applied or held for the operator, and what a crash or a session's end left held.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Literal

from guard._approvals import Approver, question_digest
from guard._effects import Reviewer
from guard._errors import GuardError, RpcFault
from guard._home import LAYERS_DIR, SESSIONS_DIR
from guard._policy import analyze
from guard._sandbox import explain_network, explain_output
from guard._sidecar.framing import RpcCode
from guard._sidecar.handlers.state import SidecarState, alive
from guard._sidecar.text import effects_dialog, effects_note
from guard._sidecar.wire import (
    ApprovalRef,
    EffectsResolveParams,
    EffectsResolveReply,
    EffectsReviewParams,
    EffectsReviewReply,
)

__all__ = ["EffectsPart"]


class EffectsPart(SidecarState):
    """``effects.review``, ``effects.resolve``; held layers settled at start and end."""

    def _settle_old_layers(self) -> None:
        """Finish what a crash left half applied, in every sidecar's layers; what a sidecar
        that is gone still held is discarded (a restart never applies anything), audited."""
        root = self.home / SESSIONS_DIR
        if not root.is_dir() or self._guard is None:
            return
        for session in sorted(p for p in root.iterdir() if p.is_dir()):
            reviewer = Reviewer(session / LAYERS_DIR)
            reviewer.recover()
            if alive(session.name):
                continue
            self._discard_held(reviewer, "sidecar-restart")
            shutil.rmtree(session, ignore_errors=True)

    def _discard_held(self, reviewer: Reviewer, reason: str) -> None:
        """Discard every held layer of ``reviewer``, each audited with ``reason``."""
        if self._guard is None:
            return
        for layer in reviewer.held():
            try:
                held = reviewer.resolve(layer, apply=False)
            except GuardError:
                continue
            self._guard.record_effects(held, layer, "/", "", confirmed=False, reason=reason)

    def _effects_review(self, p: EffectsReviewParams) -> dict[str, Any]:
        """What an agent command did: applied, or held for the operator (see ``_effects``)."""
        guard = self._need_guard()
        plan = self._sandbox
        if plan is None or plan.effects != "review":
            raise RpcFault(RpcCode.BAD_INPUT, "no effects review in this session", "no-review")
        workspace = plan.cwd
        policy = guard.classifier.policy_for(workspace)
        ignore = frozenset({"builtin.git-internals", "builtin.outside-workspace"})
        # The operator's yes to this call in its dialog: the history it rewrites in .git is
        # what they said yes to (never a grant's or an allow rule's: they name files), when
        # the dialog showed git doing it (not a yes to a script that hid it).
        answered = (
            p.tool_call_id is not None
            and p.tool_call_id in self._answered
            and _runs_git_plainly(p.command, workspace)
        )
        self._answered.discard(p.tool_call_id or "")
        approved = self._approved.pop(p.tool_call_id, ()) if p.tool_call_id else ()
        review = self._reviewer.review(
            p.layer,
            workspace,
            protected=lambda path: policy.protects_write(path, Path(workspace), ignore=ignore),
            blocked=lambda path: policy.protects_write(
                path, Path(workspace), ignore=ignore, blocked_only=True
            ),
            approved=approved,
            answered=answered,
            baseline=self._baseline,
            mount_points=plan.mount_points,
            caches=plan.cache_stores,
        )
        guard.effects_reviewed(review, p.layer, workspace, tool_call_id=p.tool_call_id)
        if review.decision == "applied" and self._baseline is not None:
            # Work the command moved is work at its new name: a write over it then asks.
            self._baseline = self._baseline.after(review.effects, workspace)
            guard.classifier.overwrites = self._baseline.holds_work
        refusals = explain_output(p.output_tail, plan.argv or (), home=os.environ.get("HOME"))
        refusals += explain_network(p.output_tail, plan.network, self._audit_network())
        why = "\n".join(r.note for r in refusals) or None
        hint = "; ".join(f"{r.path}: {r.hint}" for r in refusals) or None
        if review.decision != "held":
            reply = EffectsReviewReply(
                decision=review.decision, summary=review.summary, note=why, hint=hint
            )
            return reply.model_dump(mode="json")
        if not p.has_ui and not self._waits_headless(workspace):
            resolved = self._resolve(p.layer, p.tool_call_id, workspace, p.command, False, "no-ui")
            note = "\n".join(n for n in (resolved.note, why) if n)
            return EffectsReviewReply(
                decision="discarded", summary=review.summary, note=note, hint=hint
            ).model_dump(mode="json")
        moved = _moves(p.command, workspace)
        dialog = effects_dialog(review.held, p.command, p.output_tail, moved)
        pending = self._broker.ask(
            kind="effects",
            title=dialog.title,
            message=dialog.message,
            details=review.summary,
            digest=question_digest(
                dialog.title, dialog.message, review.summary, {"layer": p.layer}
            ),
            tool_name="bash",
            timeout_ms=p.confirm_timeout_ms,
            tool_call_id=p.tool_call_id,
            session_id=guard.session["id"] if guard.session is not None else None,
        )
        reply = EffectsReviewReply(
            decision="held",
            summary=review.summary,
            note=why,
            hint=hint,
            dialog=dialog,
            approval=ApprovalRef(id=pending.id, digest=pending.digest),
        )
        return reply.model_dump(mode="json")

    def _effects_resolve(self, p: EffectsResolveParams) -> dict[str, Any]:
        plan = self._sandbox
        workspace = plan.cwd if plan is not None else p.cwd
        settled = self._settled(p.approval_id, yes=p.apply)
        approver = settled.approver if settled is not None else None
        resolved = self._resolve(
            p.layer, p.tool_call_id, workspace, p.command, p.apply, p.reason, approver
        )
        return resolved.model_dump(mode="json")

    def _resolve(
        self,
        layer: str,
        tool_call_id: str | None,
        workspace: str,
        command: str,
        apply: bool,
        reason: str | None,
        approver: Approver | None = None,
    ) -> EffectsResolveReply:
        guard = self._need_guard()
        held = self._reviewer.pending(layer)
        # The answer is durable in the audit log (with its evidence) before the workspace
        # changes; a crash in between leaves the layer's journal to finish.
        record = guard.record_effects(
            held,
            layer,
            workspace,
            command,
            confirmed=apply,
            tool_call_id=tool_call_id,
            reason=reason,
            approver=approver,
        )
        done = self._reviewer.resolve(layer, apply=apply)
        decision: Literal["applied", "discarded"] = "applied" if apply else "discarded"
        return EffectsResolveReply(
            decision=decision,
            note=effects_note(decision, done.held, reason, done.skipped),
            evidence_id=record.evidence_id,
            envelope=record.envelope.model_dump(mode="json") if record.envelope else None,
        )


def _moves(command: str, workspace: str) -> dict[str, str]:
    """Where a plain ``mv`` of the command put each path it moved out of the workspace
    (workspace-relative source -> destination as written), for the dialog: a deletion the
    command moved elsewhere says so. What the analysis cannot read names nothing."""
    try:
        script = analyze(command, cwd=workspace)
    except Exception:  # an analysis that fails names nothing
        return {}
    out: dict[str, str] = {}
    for c in (c for c in script.commands if c.program == "mv"):
        words = [w.value for w in c.args]
        if None in words:
            continue
        values = [w for w in words if w is not None]
        target = next(
            (v.split("=", 1)[1] for v in values if v.startswith("--target-directory=")), None
        )
        plain = [v for v in values if not v.startswith("-")]
        if "-t" in values and values.index("-t") + 1 < len(values):
            target = values[values.index("-t") + 1]
            plain = [v for v in plain if v != target]
        if target is None and len(plain) >= 2:
            target, plain = plain[-1], plain[:-1]
        if target is None:
            continue
        into = target.endswith("/") or len(plain) > 1 or os.path.isdir(os.path.join(c.cwd, target))
        for source in plain:
            rel = os.path.relpath(os.path.normpath(os.path.join(c.cwd, source)), workspace)
            name = os.path.basename(source.rstrip("/"))
            out[rel] = os.path.join(target, name) if into else target
    return out


def _runs_git_plainly(command: str, cwd: str) -> bool:
    """Whether the analysis sees git run in ``command`` with nothing it cannot read (no
    inline code, no string built at runtime): then a yes to it was a yes to git's doing."""
    try:
        script = analyze(command, cwd=cwd)
    except Exception:  # an analysis that fails covers nothing
        return False
    return not script.findings and any(c.program == "git" for c in script.commands)
