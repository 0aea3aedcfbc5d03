"""What is inside the repository is the operator's too: a ref that moved with its old value
named nowhere (a tag has no reflog), a pack rewritten in place, a submodule's repository
deleted are held; a baseline walk cut short holds and asks, never judging from a sample (its
"committed" is still the operator's HEAD). Real overlay, real git."""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path

import pytest

from guard._effects import Baseline, unasked
from tests.guard.effects.conftest import Overlay, snapshot
from tests.guard.effects.test_review import git, make_repo, review


def _tagged(ws: Path, *, packed: bool = False) -> None:
    """A release tag (annotated: its tag object is named by the tag alone) and a
    lightweight tag on a commit no branch holds any more."""
    make_repo(ws)
    git(ws, "tag", "-a", "v1", "-m", "release one")
    git(ws, "checkout", "-q", "-b", "spike")
    (ws / "spike.c").write_text("int spike;\n")
    git(ws, "add", "spike.c")
    git(ws, "commit", "-qm", "spike")
    git(ws, "tag", "spike-tip")
    git(ws, "checkout", "-q", "-")
    git(ws, "branch", "-q", "-D", "spike")
    git(ws, "reflog", "expire", "--expire=now", "--all")
    if packed:
        git(ws, "pack-refs", "--all")


TAG_MOVES = {
    "tag-f": "git tag -f spike-tip HEAD",
    "tag-f-annotated": "git -c user.name=a -c user.email=a@a tag -f -a v1 -m moved HEAD",
    "update-ref": "git update-ref refs/tags/spike-tip HEAD",
    "by-hand": "git rev-parse HEAD > .git/refs/tags/v1",
    "python": "python3 -c \"import subprocess as s; h=s.check_output(['git','rev-parse','HEAD'])"
    "; open('.git/refs/tags/spike-tip','wb').write(h)\"",
}


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
@pytest.mark.parametrize("name", sorted(TAG_MOVES))
def test_a_ref_moved_with_its_old_value_named_nowhere_is_held(
    overlay: Overlay, name: str, packed: bool
) -> None:
    ws = overlay.workspace
    _tagged(ws, packed=packed)
    before = snapshot(ws / ".git")
    _, _, result = review(overlay, TAG_MOVES[name])
    assert result.decision == "held", result
    assert "repository" in {h.reason for h in result.held}
    kept = snapshot(ws / ".git")
    for ref in ("refs/tags/v1", "refs/tags/spike-tip", "packed-refs"):
        assert kept.get(ref) == before.get(ref), ref


ROUTINE = {
    "commit": "echo more >> README.md && git -c user.name=a -c user.email=a@a commit -qam more",
    "commit-then-reset": "git -c user.name=a -c user.email=a@a commit -q --allow-empty -m e"
    " && git reset -q --hard HEAD~1",
    "new-tag": "git tag v2",
    "branch-moved": "git branch -q topic && git branch -q -f topic HEAD",
    "pack-refs": "git pack-refs --all",
    "gc": "git gc -q",
}


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
@pytest.mark.parametrize("name", sorted(ROUTINE))
def test_refs_that_move_with_their_reflog_are_applied(
    overlay: Overlay, name: str, packed: bool
) -> None:
    _tagged(overlay.workspace, packed=packed)
    _, _, result = review(overlay, ROUTINE[name])
    assert result.decision in ("applied", "empty"), result  # pack-refs of packed refs: empty
    assert result.held == ()


PACK_DAMAGE = {
    "dd": "for p in .git/objects/pack/*.pack; do chmod u+w $p;"
    " printf 'xxxx' | dd of=$p bs=1 seek=40 conv=notrunc 2>/dev/null; done",
    "idx-copied-over": "cd .git/objects/pack && chmod u+w *.idx && for i in *.idx; do"
    " head -c 1100 $i > t && cat t > $i && rm t; done",
    "python": "python3 -c \"import glob,os; p=glob.glob('.git/objects/pack/*.pack')[0];"
    " os.chmod(p,0o644); f=open(p,'r+b'); f.seek(30); f.write(b'zz')\"",
}


@pytest.mark.parametrize("name", sorted(PACK_DAMAGE))
def test_a_pack_rewritten_in_place_is_held(overlay: Overlay, name: str) -> None:
    ws = overlay.workspace
    _tagged(ws)
    git(ws, "gc", "-q")
    _, _, result = review(overlay, PACK_DAMAGE[name])
    assert result.decision == "held", result
    assert "repository" in {h.reason for h in result.held}
    fsck = subprocess.run(["git", "-C", str(ws), "fsck"], capture_output=True, check=False)
    assert fsck.returncode == 0, fsck.stderr


def _with_submodule(ws: Path, tmp: Path) -> None:
    lib = tmp / "lib"
    lib.mkdir()
    (lib / "lib.c").write_text("int lib;\n")
    git(lib, "init", "-q")
    git(lib, "add", "-A")
    git(lib, "commit", "-qm", "lib")
    make_repo(ws)
    git(ws, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(lib), "lib")
    git(ws, "commit", "-qm", "lib")
    sub = ws / "lib"
    (sub / "local.c").write_text("int local;\n")
    git(sub, "add", "local.c")
    git(sub, "commit", "-qm", "unpushed work in the submodule")


SUBMODULE_LOSSES = {
    "whole": "rm -rf .git/modules/lib",
    "objects": "rm -rf .git/modules/lib/objects",
    "refs": "rm -rf .git/modules/lib/refs",
    "branch-D": "git -C lib checkout -q --detach && git -C lib branch -q -D main master; true",
    "reflog": "git -C lib reflog expire --expire=now --all",
}


@pytest.mark.parametrize("name", sorted(SUBMODULE_LOSSES))
def test_a_submodule_s_history_lost_is_held(overlay: Overlay, tmp_path: Path, name: str) -> None:
    ws = overlay.workspace
    _with_submodule(ws, tmp_path)
    _, _, result = review(overlay, SUBMODULE_LOSSES[name])
    assert result.decision == "held", result
    assert "repository" in {h.reason for h in result.held}
    log = subprocess.run(
        ["git", "-C", str(ws / "lib"), "log", "--oneline", "-1"], capture_output=True, text=True
    )
    assert "unpushed work" in log.stdout


@pytest.fixture
def cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline walk past its limit (200,000 paths in life; 1 here)."""
    monkeypatch.setattr(importlib.import_module("guard._effects.baseline"), "_MAX_BASELINE", 1)


LAUNDER_AFTER_COMMIT = {
    "rm": "rm notes.md",
    "git-rm": "git rm -q notes.md",
    "find-delete": "find . -name notes.md -delete",
    "python": "python3 -c 'import os; os.remove(\"notes.md\")'",
    "overwrite": "echo gone > notes.md",
}


@pytest.mark.usefixtures("cut_short")
@pytest.mark.parametrize("name", sorted(LAUNDER_AFTER_COMMIT))
def test_a_baseline_cut_short_never_counts_an_agent_s_commit(overlay: Overlay, name: str) -> None:
    """The baseline fell back to the HEAD of the moment: the agent committed the work, then
    deleted it as "committed"."""
    ws = overlay.workspace
    make_repo(ws)
    (ws / "more.md").write_text("more work\n")
    baseline = Baseline.of(str(ws))
    assert not baseline.complete
    _, _, committed = review(
        overlay,
        "git add notes.md && git -c user.name=a -c user.email=a@a commit -qm wip",
        baseline=baseline,
    )
    assert committed.decision == "applied", committed
    _, _, result = review(overlay, LAUNDER_AFTER_COMMIT[name], baseline=baseline)
    assert result.decision == "held", result
    assert {h.reason for h in result.held} <= {"unexamined", "untracked", "uncommitted"}
    assert (ws / "notes.md").read_text() == "untracked work\n"


@pytest.mark.usefixtures("cut_short")
def test_a_baseline_cut_short_holds_what_it_would_call_ignored(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    baseline = Baseline.of(str(ws))
    _, _, result = review(overlay, "rm -rf build", baseline=baseline)
    assert [(h.effect.path, h.reason) for h in result.held] == [("build", "unexamined")]


@pytest.mark.usefixtures("cut_short")
@pytest.mark.parametrize("target", ["node_modules", "gone", "build", "src/main.c", ".pytest_cache"])
def test_a_baseline_cut_short_asks_on_the_quiet_path(overlay: Overlay, target: str) -> None:
    ws = overlay.workspace
    make_repo(ws)
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / ".pytest_cache").mkdir()
    baseline = Baseline.of(str(ws))
    assert unasked(["builtin.rm"], [str(ws / target)], str(ws), baseline) is None


def test_a_whole_baseline_still_runs_them_unasked(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    (ws / "node_modules" / "x").mkdir(parents=True)
    baseline = Baseline.of(str(ws))
    assert baseline.complete
    targets = [str(ws / t) for t in ("node_modules", "gone", "build", "src/main.c")]
    ran = unasked(["builtin.rm"], targets, str(ws), baseline)
    assert ran is not None
    assert [t.reason for t in ran] == ["regenerable", "missing", "ignored", "clean"]
