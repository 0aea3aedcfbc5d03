"""The hostile corpora still ask where work is at stake: every destructive spelling and every
evasion, in a repository where each target it names inside the workspace holds the
operator's untracked work, is never let through by the quiet judgement (only a target in a
regenerable place, whose content is never work, may be)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard._effects import Baseline, unasked
from guard._effects.judge import REGENERABLE
from guard._policy import Policy
from tests.guard.effects.test_review import git
from tests.guard.policy.corpus import BLOCKED, DESTRUCTIVE
from tests.guard.policy.corpus_evasion import EVASION

_SPELLINGS = sorted({*DESTRUCTIVE, *BLOCKED, *(c for cs in EVASION.values() for c in cs)})


def _plant(project: Path, target: str) -> bool:
    """Make ``target`` the operator's untracked work; False where it cannot be (a glob, a
    path in ``.git``, one through a file already there)."""
    if any(c in target for c in "*?[$`\"'") or not os.path.isabs(target):
        return False
    rel = os.path.relpath(os.path.normpath(target), project)
    parts = rel.split("/")
    if rel.startswith("..") or rel == "." or ".git" in parts:
        return False
    path = project / rel
    if path == project / "README.md":
        return False  # tracked and clean: restorable, rightly quiet
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("the operator's work\n")
    except OSError:
        return False
    return True


# A sweep of every destructive spelling and evasion (about 8 CPU-seconds): make test runs it.
@pytest.mark.slow
def test_no_destructive_spelling_loses_untracked_work_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
    repo = (tmp_path / "project").resolve()
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("readme\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    policy = Policy.load(home / ".pi" / "agent" / "operator-guard", repo)
    let_through = []
    judged = 0
    for command in _SPELLINGS:
        verdict = policy.classify("bash", {"command": command}, repo)
        if verdict.verdict != "confirm":
            continue
        targets = [t for t in verdict.targets if _plant(repo, t)]
        judged += 1
        why = unasked(verdict.rule_ids, verdict.targets, str(repo), Baseline.of(str(repo)))
        if why is None:
            continue
        at_risk = [
            t.path
            for t in why
            if t.path in targets and not REGENERABLE.intersection(Path(t.path).parts)
        ]
        if at_risk:
            let_through.append((command, at_risk))
    assert judged > 200
    assert let_through == []
