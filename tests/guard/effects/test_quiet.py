"""Which destructive calls run unasked: only where every target is restorable against the
operator's baseline (missing, regenerable, ignored then, or clean against the baseline's
HEAD); untracked or modified work, and anything an agent command arranged since the
baseline, asks. Real git."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard._effects import Baseline, unasked
from tests.guard.effects.test_review import git, make_repo


def _quiet(ws: Path, *names: str, rules: tuple[str, ...] = ("builtin.rm",), **kw: object):  # type: ignore[no-untyped-def]
    baseline = kw.pop("baseline", None) or Baseline.of(str(ws))
    return unasked(rules, [str(ws / n) for n in names], str(ws), baseline, **kw)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    make_repo(root)
    (root / ".gitignore").write_text("build/\n*.log\ndist/\n")
    git(root, "commit", "-qam", "ignore dist")
    return root.resolve()


def test_the_issue_s_pointless_asks_run_unasked(ws: Path) -> None:
    (ws / "dist").mkdir()
    (ws / "dist" / "app.js").write_text("built\n")
    (ws / ".pytest_cache").mkdir()
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "m.cpython-312.pyc").write_bytes(b"\0")
    baseline = Baseline.of(str(ws))
    assert _quiet(ws, "dist", baseline=baseline)[0].reason == "ignored"  # type: ignore[index]
    reasons = _quiet(ws, ".pytest_cache", "__pycache__", baseline=baseline)
    assert [t.reason for t in reasons] == ["regenerable", "regenerable"]  # type: ignore[union-attr]
    shutil.rmtree(ws / "dist")
    assert _quiet(ws, "dist", baseline=baseline)[0].reason == "missing"  # type: ignore[index]
    sed = _quiet(ws, "README.md", rules=("builtin.sed-in-place",), baseline=baseline)
    assert sed is not None
    assert sed[0].reason == "clean"
    assert _quiet(ws, "src", baseline=baseline)[0].reason == "clean"  # type: ignore[index]


def test_untracked_or_modified_work_asks(ws: Path) -> None:
    assert _quiet(ws, "notes.md") is None
    (ws / "README.md").write_text("changed\n")
    assert _quiet(ws, "README.md", rules=("builtin.sed-in-place",)) is None
    assert _quiet(ws, ".") is None  # the workspace itself holds notes.md
    (ws / "src" / "new.c").write_text("new\n")
    assert _quiet(ws, "src") is None  # a clean tracked folder holding untracked work


@pytest.mark.parametrize(
    "rule",
    ["builtin.download-exec", "builtin.unresolved", "builtin.eval", "builtin.git-internals",
     "builtin.kill-by-name", "builtin.git-clean", "builtin.dotenv", "user.relaxed"],
)  # fmt: skip
def test_any_other_rule_asks(ws: Path, rule: str) -> None:
    assert _quiet(ws, "build", rules=("builtin.rm", rule)) is None


@pytest.mark.parametrize(
    "target",
    ["../outside", ".git", ".git/refs", "build/*", "build/../notes.md", "node_modules/../src",
     "link"],
)  # fmt: skip
def test_targets_the_judgement_cannot_vouch_for_ask(ws: Path, target: str) -> None:
    (ws / "node_modules").mkdir()
    (ws / "link").symlink_to(ws / "notes.md")
    (ws.parent / "outside").mkdir()
    assert unasked(("builtin.rm",), [os.path.normpath(str(ws / target)) if target.startswith("../")
                                     else f"{ws}/{target}"], str(ws), Baseline.of(str(ws))) is None  # fmt: skip


def test_a_path_through_a_link_asks(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "dist").mkdir()
    (ws / "via").symlink_to(tmp_path / "elsewhere")
    assert _quiet(ws, "via/dist") is None


def test_no_baseline_or_no_repository_asks(ws: Path, tmp_path: Path) -> None:
    assert unasked(("builtin.rm",), [str(ws / "build")], str(ws), None) is None
    plain = tmp_path / "plain"
    (plain / "dist").mkdir(parents=True)
    assert _quiet(plain.resolve(), "dist") is None
    assert _quiet(plain.resolve(), "gone")[0].reason == "missing"  # type: ignore[index]


def test_an_ignore_file_written_over_the_work_does_not_make_it_ignored(ws: Path) -> None:
    (ws / "notes").mkdir()
    (ws / "notes" / "draft.md").write_text("work\n")
    baseline = Baseline.of(str(ws))
    (ws / "notes" / ".gitignore").write_text("*\n")
    assert _quiet(ws, "notes", baseline=baseline) is None
    (ws / ".gitignore").write_text("build/\n*.log\ndist/\nnotes/\n")
    assert _quiet(ws, "notes", baseline=baseline) is None
    (ws / ".git" / "info" / "exclude").write_text("notes\n")
    assert _quiet(ws, "notes", baseline=baseline) is None


def test_a_new_path_is_ignored_only_by_the_baseline_s_rules(ws: Path) -> None:
    baseline = Baseline.of(str(ws))
    (ws / "dist").mkdir()  # made after the baseline, ignored by its rules: rebuilt
    (ws / "dist" / "x.js").write_text("built\n")
    assert _quiet(ws, "dist", baseline=baseline)[0].reason == "ignored"  # type: ignore[index]
    (ws / "moved").mkdir()  # the agent moves work somewhere, then ignores that place
    (ws / "moved" / "draft.md").write_text("work\n")
    (ws / ".gitignore").write_text("build/\n*.log\ndist/\nmoved/\n")
    assert _quiet(ws, "moved", baseline=baseline) is None
    (ws / ".gitignore").write_text("build/\n*.log\ndist/\n")
    (ws / "moved" / ".gitignore").write_text("*\n")
    assert _quiet(ws, "moved", baseline=baseline) is None


def test_a_commit_the_agent_made_is_not_committed(ws: Path) -> None:
    baseline = Baseline.of(str(ws))
    git(ws, "add", "notes.md")
    git(ws, "commit", "-qm", "agent")
    assert _quiet(ws, "notes.md", baseline=baseline) is None
    (ws / "README.md").write_text("agent's change\n")
    git(ws, "commit", "-qam", "agent")
    assert _quiet(ws, "README.md", rules=("builtin.sed-in-place",), baseline=baseline) is None
    retaken = baseline.union(Baseline.of(str(ws)))  # the operator answered since
    assert retaken.is_work("notes.md")  # a later baseline never forgets the work
    assert _quiet(ws, "README.md", rules=("builtin.sed-in-place",), baseline=retaken)


def test_regenerable_places_and_the_user_s_names(ws: Path) -> None:
    (ws / "node_modules" / "left-pad").mkdir(parents=True)
    (ws / "target").mkdir()
    (ws / "target" / "out").write_text("built\n")
    baseline = Baseline.of(str(ws))
    assert _quiet(ws, "node_modules", baseline=baseline)[0].reason == "regenerable"  # type: ignore[index]
    assert _quiet(ws, "target", baseline=baseline) is None
    named = _quiet(ws, "target", baseline=baseline, regenerable=("target",))
    assert named is not None
    assert named[0].reason == "regenerable"


def test_a_baseline_not_taken_whole_asks_for_every_call(ws: Path) -> None:
    """It judges nothing from a sample: not ignored, not clean, not even missing or
    regenerable (tests/guard/effects/test_review_history.py has the walk cut short)."""
    partial = Baseline(str(ws), complete=False)
    for target in ("build", "README.md", "absent", "node_modules"):
        assert _quiet(ws, target, baseline=partial) is None, target


_STATES = ("clean", "modified", "untracked", "ignored", "missing", "regenerable")


@pytest.mark.slow  # a property test with a git repository per example: make test runs it
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    states=st.lists(st.sampled_from(_STATES), min_size=1, max_size=5),
    later=st.sampled_from(("none", "ignore-all", "commit-all", "exclude-all")),
)
def test_no_untracked_or_modified_target_runs_unasked(states: list[str], later: str) -> None:
    """Whatever the agent arranged after the baseline (an ignore file over everything, a
    commit of everything, an exclude), a target holding untracked or modified work asks."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve()
        names = [f"f{i}" for i in range(len(states))]
        for name, state in zip(names, states, strict=True):
            if state in ("clean", "modified"):
                (ws / name).write_text("committed\n")
        (ws / ".gitignore").write_text(
            "".join(f"{n}\n" for n, s in zip(names, states, strict=True) if s == "ignored")
        )
        git(ws, "init", "-q")
        git(ws, "add", "-A")
        git(ws, "commit", "-qm", "start", "--allow-empty")
        targets = []
        for name, state in zip(names, states, strict=True):
            path = ws / name
            if state == "modified":
                path.write_text("changed\n")
            elif state in ("untracked", "ignored"):
                path.write_text("work\n")
            elif state == "regenerable":
                path = ws / "__pycache__" / name
                path.parent.mkdir(exist_ok=True)
                path.write_text("cache\n")
            targets.append(str(path))
        baseline = Baseline.of(str(ws))
        if later == "ignore-all":
            (ws / ".gitignore").write_text("*\n")
        elif later == "commit-all":
            git(ws, "add", "-A")
            git(ws, "commit", "-qm", "agent", "--allow-empty")
        elif later == "exclude-all":
            (ws / ".git" / "info" / "exclude").write_text("*\n")
        result = unasked(("builtin.rm",), targets, str(ws), baseline)
        at_risk = {"modified", "untracked"} & set(states)
        if at_risk:
            assert result is None, (states, later)
        elif later == "none":
            assert result is not None, states
            assert [t.reason for t in result] == [
                {"clean": "clean", "ignored": "ignored", "missing": "missing",
                 "regenerable": "regenerable"}[s] for s in states
            ]  # fmt: skip


def test_rmdir_alone_names_a_directory_it_can_only_remove_empty(ws: Path) -> None:
    (ws / "archive").mkdir()
    (ws / "archive" / "draft.md").write_text("work\n")
    only = _quiet(ws, "archive", rules=("builtin.rmdir",))
    assert only is not None
    assert only[0].reason == "empty-only"
    assert _quiet(ws, "archive", rules=("builtin.rmdir", "builtin.rm")) is None
    (ws / "archive-link").symlink_to(ws / "archive")
    assert _quiet(ws, "archive-link", rules=("builtin.rmdir",)) is None
    assert _quiet(ws, ".git/refs", rules=("builtin.rmdir",)) is None
