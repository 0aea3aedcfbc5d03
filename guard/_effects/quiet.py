"""Which destructive calls lose nothing the operator had: those run without a dialog.

A call the policy would ask about for deleting or rewriting files only (:data:`QUIET_RULES`)
runs unasked when every target the analysis resolved is, against the operator's
:class:`~guard._effects.baseline.Baseline`:

* ``missing``: not there (nothing to lose);
* ``regenerable``: in a place tools make again (:data:`~guard._effects.judge.REGENERABLE`
  and the names the user's ``[sandbox] regenerable`` adds), whose content the effects review
  never counts as work either;
* ``ignored``: ignored by git then, or now by rules that are still the baseline's;
* ``clean``: every file tracked with the content the baseline's HEAD holds;
* ``empty-only``: a directory only ``rmdir`` names (it removes an empty one or fails).

Anything else asks: untracked or modified work, a target outside the workspace or inside
``.git``, a link, a glob, a walk past :data:`MAX_FILES`, and every call while the baseline
could not be taken whole. The effects review still checks
afterwards what the command really did; the caller makes sure it runs (the sandbox with the
review on), or asks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from guard._effects.baseline import Baseline
from guard._effects.judge import REGENERABLE, GitState
from guard._policy import within

__all__ = ["MAX_FILES", "QUIET_RULES", "UnaskedReason", "UnaskedTarget", "unasked"]

QUIET_RULES = frozenset(
    {
        "builtin.rm", "builtin.rmdir", "builtin.find-delete", "builtin.sed-in-place",
        "builtin.truncate", "builtin.git-checkout-discard", "builtin.git-restore-worktree",
        "builtin.git-restore-worktree-explicit",
    }
)  # fmt: skip
"""The rules whose only concern is the files they delete or rewrite in place: a call asked
for any other rule (network, other hosts, process control, secrets, code at runtime,
history, protected paths) asks as before."""
MAX_FILES = 5_000
"""A directory target with more files than this is not examined one by one: it asks."""

UnaskedReason = Literal["missing", "regenerable", "ignored", "clean", "empty-only"]


@dataclass(frozen=True)
class UnaskedTarget:
    """One target of a call that ran unasked, and why it could be restored or rebuilt."""

    path: str
    reason: UnaskedReason


def _files(path: str) -> list[str] | None:
    """The files (and links) under ``path``; None past :data:`MAX_FILES`."""
    out: list[str] = []
    for root, dirs, names in os.walk(path):
        out += [os.path.join(root, n) for n in names]
        out += [os.path.join(root, d) for d in dirs if os.path.islink(os.path.join(root, d))]
        if len(out) > MAX_FILES:
            return None
    return out


def _clean(state: GitState, baseline: Baseline, path: str) -> bool:
    """Every file at ``path`` tracked with the content of the baseline's HEAD."""
    assert state.top is not None
    assert baseline.head is not None
    files = [path] if not os.path.isdir(path) else _files(path)
    if files is None:
        return False
    names = [os.path.relpath(f, state.top) for f in files]
    state.load_head(names, baseline.head)
    return all(
        not os.path.islink(f) and os.path.isfile(f) and state.head.get(n) == state.object_id(f)
        for f, n in zip(files, names, strict=True)
    )


def _judge(
    target: str, workspace: str, baseline: Baseline, names: frozenset[str], state: GitState
) -> UnaskedReason | None:
    if (
        not os.path.isabs(target)
        or target != os.path.normpath(target)
        or any(c in target for c in "*?[")
        or not within(target, workspace)
    ):
        return None
    if os.path.islink(target) or (os.path.lexists(target) and target != os.path.realpath(target)):
        return None  # a link, or a path through one: what it reaches is judged nowhere here
    parts = os.path.relpath(target, workspace).split("/")
    if ".git" in parts or parts == ["."]:
        return None
    top = state.top
    rel = os.path.relpath(target, top) if top is not None and within(target, top) else None
    if not os.path.lexists(target):
        return "missing"
    if baseline.top is not None and baseline.top != top:
        return None  # the repository changed under the session: nothing to judge against
    if names.intersection(parts):
        return "regenerable"  # what is in them is never work, for the review too
    if rel is None or top is None or baseline.top is None or not baseline.complete:
        return None
    if baseline.judged_ignored(rel, bool(state.ignored([rel]))):
        return "ignored"
    if baseline.head is not None and not baseline.is_work(rel) and _clean(state, baseline, target):
        return "clean"
    return None


def _plain_dir(target: str, workspace: str) -> bool:
    """A real directory in the workspace, outside ``.git``, reached through no link."""
    return (
        os.path.isabs(target)
        and target == os.path.realpath(target)
        and os.path.isdir(target)
        and within(target, workspace)
        and ".git" not in os.path.relpath(target, workspace).split("/")
    )


def unasked(
    rule_ids: Sequence[str],
    targets: Sequence[str],
    workspace: str,
    baseline: Baseline | None,
    *,
    regenerable: Iterable[str] = (),
) -> tuple[UnaskedTarget, ...] | None:
    """Why the call may run unasked, target by target; None when it must ask (see the
    module). ``targets`` are the analysis's, absolute; ``workspace`` is the sandbox's."""
    if baseline is None or not rule_ids or not targets or not set(rule_ids) <= QUIET_RULES:
        return None
    if not baseline.complete:
        return None  # a baseline walk cut short judges nothing from a sample: it asks
    workspace = os.path.realpath(workspace)
    state = GitState.of(workspace)
    names = REGENERABLE | frozenset(regenerable)
    out: list[UnaskedTarget] = []
    only_rmdir = set(rule_ids) == {"builtin.rmdir"}
    for target in targets:
        reason = _judge(target, workspace, baseline, names, state)
        if reason is None and only_rmdir and _plain_dir(target, workspace):
            reason = "empty-only"  # rmdir removes an empty directory or fails
        if reason is None:
            return None
        out.append(UnaskedTarget(path=target, reason=reason))
    return tuple(out)
