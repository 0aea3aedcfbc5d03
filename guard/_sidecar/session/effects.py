"""The session's effects review (``effects.review``, ``effects.resolve``): its command
layers and their reviewer, the operator's baseline it judges against, the user's ``[sandbox]``
quiet settings; what a command did, applied or held for the operator, and what a crash or
a session's end left held. Why a quiet call ran unasked, and what each call was said yes to,
is the session's :class:`~guard._sidecar.session.memo.Memo`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Literal

from guard._approvals import Approver, question_digest
from guard._effects import Baseline, Reviewer, UnaskedTarget, unasked
from guard._errors import GuardError, RpcFault
from guard._evidence import Evaluation
from guard._home import LAYERS_DIR, SESSIONS_DIR
from guard._policy import analyze
from guard._sandbox import explain_network, explain_output, workspace_stamp
from guard._sidecar.framing import RpcCode
from guard._sidecar.session.desk import Desk
from guard._sidecar.session.home import Home
from guard._sidecar.session.memo import Memo
from guard._sidecar.session.sandbox import SessionSandbox
from guard._sidecar.text import effects_dialog, effects_note
from guard._sidecar.wire import (
    ApprovalRef,
    EffectsResolveParams,
    EffectsResolveReply,
    EffectsReviewParams,
    EffectsReviewReply,
    EvaluateParams,
)

__all__ = ["Effects", "alive"]


def alive(session: str) -> bool:
    """Whether the sidecar that made ``session`` (``s<pid>-<random>``) still runs."""
    try:
        pid = int(session[1:].split("-", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Effects:
    """The review of what agent commands did (see the module)."""

    def __init__(self, home: Home, desk: Desk, sandbox: SessionSandbox, memo: Memo) -> None:
        self.home = home
        self.desk = desk
        self.sandbox = sandbox
        self.memo = memo
        self.reviewer = Reviewer(sandbox.layers)
        # What the operator had when the session started (the effects review judges
        # "ignored" against it, never against ignore files an agent command wrote).
        self.baseline: Baseline | None = None
        # The user's [sandbox] ask and regenerable (read at sandbox.plan).
        self.quiet: tuple[str, tuple[str, ...]] = ("every", ())

    # -- the baseline and the calls that run unasked -----------------------------------------

    def retake_baseline(self, cwd: str) -> None:
        """What the operator has now (the session starts, or the operator answered), never
        forgetting the work an earlier baseline had."""
        now = Baseline.of(cwd)
        self.baseline = now if self.baseline is None else self.baseline.union(now)
        if self.home.guard is not None:
            # pi's write/edit of a file that held work then asks (the policy cache asks it).
            self.home.guard.classifier.overwrites = self.baseline.holds_work

    def restorable(
        self, p: EvaluateParams, evaluation: Evaluation
    ) -> tuple[UnaskedTarget, ...] | None:
        """Why an asked bash call may run unasked (``guard._effects.quiet``), or None: only
        when it runs in the sandbox with the effects review and the user did not set
        ``[sandbox] ask = "every"``."""
        plan = self.sandbox.plan
        ask, regenerable = self.quiet
        if (
            ask != "losses"
            or p.tool_name != "bash"
            or p.tool_call_id is None
            or p.parent is not None
            or plan is None
            or plan.state != "sandboxed"
            or plan.effects != "review"
            or workspace_stamp(plan.cwd) != self.sandbox.stamp  # re-planned at once after
            or os.path.realpath(p.cwd) != os.path.realpath(plan.cwd)
        ):
            return None
        return unasked(
            evaluation.rule_ids,
            evaluation.targets,
            plan.cwd,
            self.baseline,
            regenerable=regenerable,
        )

    # -- held layers at start and end --------------------------------------------------------

    def settle_old_layers(self) -> None:
        """Finish what a crash left half applied, in every sidecar's layers; what a sidecar
        that is gone still held is discarded (a restart never applies anything), audited."""
        root = self.home.path / SESSIONS_DIR
        if not root.is_dir() or self.home.guard is None:
            return
        for session in sorted(p for p in root.iterdir() if p.is_dir()):
            reviewer = Reviewer(session / LAYERS_DIR)
            reviewer.recover()
            if alive(session.name):
                continue
            self.discard_held(reviewer, "sidecar-restart")
            shutil.rmtree(session, ignore_errors=True)

    def discard_held(self, reviewer: Reviewer, reason: str) -> None:
        """Discard every held layer of ``reviewer``, each audited with ``reason``."""
        guard = self.home.guard
        if guard is None:
            return
        for layer in reviewer.held():
            try:
                held = reviewer.resolve(layer, apply=False)
            except GuardError:
                continue
            guard.effects.record(held, layer, "/", "", confirmed=False, reason=reason)

    # -- the verbs ---------------------------------------------------------------------------

    def review(self, p: EffectsReviewParams) -> EffectsReviewReply:
        """What an agent command did: applied, or held for the operator (see ``_effects``)."""
        guard = self.home.need_guard()
        plan = self.sandbox.plan
        if plan is None or plan.effects != "review":
            raise RpcFault(RpcCode.BAD_INPUT, "no effects review in this session", "no-review")
        workspace = plan.cwd
        policy = guard.classifier.policy_for(workspace)
        ignore = frozenset({"builtin.git-internals", "builtin.outside-workspace"})
        # The operator's yes to this call in its dialog: the history it rewrites in .git is
        # what they said yes to (never a grant's or an allow rule's: they name files), when
        # the dialog showed git doing it (not a yes to a script that hid it).
        desk, memo = self.desk, self.memo
        answered = (
            p.tool_call_id is not None
            and p.tool_call_id in memo.answered
            and _runs_git_plainly(p.command, workspace)
        )
        memo.answered.discard(p.tool_call_id or "")
        approved = memo.approved.pop(p.tool_call_id, ()) if p.tool_call_id else ()
        review = self.reviewer.review(
            p.layer,
            workspace,
            protected=lambda path: policy.protects_write(path, Path(workspace), ignore=ignore),
            blocked=lambda path: policy.protects_write(
                path, Path(workspace), ignore=ignore, blocked_only=True
            ),
            approved=approved,
            answered=answered,
            baseline=self.baseline,
            mount_points=plan.mount_points,
            caches=plan.cache_stores,
        )
        guard.effects.reviewed(review, p.layer, workspace, tool_call_id=p.tool_call_id)
        if review.decision == "applied" and self.baseline is not None:
            # Work the command moved is work at its new name: a write over it then asks.
            self.baseline = self.baseline.after(review.effects, workspace)
            guard.classifier.overwrites = self.baseline.holds_work
        refusals = explain_output(p.output_tail, plan.argv or (), home=os.environ.get("HOME"))
        refusals += explain_network(p.output_tail, plan.network, self.sandbox.audit_network())
        why = "\n".join(r.note for r in refusals) or None
        hint = "; ".join(f"{r.path}: {r.hint}" for r in refusals) or None
        if review.decision != "held":
            return EffectsReviewReply(
                decision=review.decision, summary=review.summary, note=why, hint=hint
            )
        if not p.has_ui and not self.sandbox.waits_headless(workspace):
            resolved = self._resolve(p.layer, p.tool_call_id, workspace, p.command, False, "no-ui")
            note = "\n".join(n for n in (resolved.note, why) if n)
            return EffectsReviewReply(
                decision="discarded", summary=review.summary, note=note, hint=hint
            )
        moved = _moves(p.command, workspace)
        dialog = effects_dialog(review.held, p.command, p.output_tail, moved)
        pending = desk.broker.ask(
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
        return EffectsReviewReply(
            decision="held",
            summary=review.summary,
            note=why,
            hint=hint,
            dialog=dialog,
            approval=ApprovalRef(id=pending.id, digest=pending.digest),
        )

    def resolve(self, p: EffectsResolveParams) -> EffectsResolveReply:
        """The operator's answer to a held layer: applied or discarded, audited first."""
        workspace = self.sandbox.workspace(p.cwd)
        settled = self.desk.settled(p.approval_id, yes=p.apply)
        approver = settled.approver if settled is not None else None
        return self._resolve(
            p.layer, p.tool_call_id, workspace, p.command, p.apply, p.reason, approver
        )

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
        guard = self.home.need_guard()
        held = self.reviewer.pending(layer)
        # The answer is durable in the audit log (with its evidence) before the workspace
        # changes; a crash in between leaves the layer's journal to finish.
        record = guard.effects.record(
            held,
            layer,
            workspace,
            command,
            confirmed=apply,
            tool_call_id=tool_call_id,
            reason=reason,
            approver=approver,
        )
        done = self.reviewer.resolve(layer, apply=apply)
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
