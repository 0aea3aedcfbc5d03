"""pi's ``write``/``edit`` overwriting the operator's untracked or uncommitted work asks, as
the same change through bash is held by the effects review; judged against the baseline: a
new file, a file clean or ignored then, or one an agent made since does not ask. Through the
policy cache every step of a call classifies with (evaluate, record, consume), so the
question and its evidence agree. Real git."""

from __future__ import annotations

import importlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard._effects import Baseline
from guard._facade.consumer import classify_call
from guard._policy import PolicyCache
from tests.guard.effects.conftest import Overlay
from tests.guard.effects.test_review import git, make_repo, review


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    make_repo(ws)  # notes.md untracked, build/ ignored, src/main.c and README.md clean
    (ws / "README.md").write_text("the operator's edit, not committed\n")
    return ws


def _cache(ws: Path, baseline: Baseline) -> PolicyCache:
    cache = PolicyCache(ws.parent / "home")
    cache.overwrites = baseline.holds_work
    return cache


def _verdict(cache: PolicyCache, ws: Path, tool: str, path: str) -> tuple[str, tuple[str, ...]]:
    tool_input = (
        {"path": path, "content": "replaced\n"}
        if tool == "write"
        else {"path": path, "edits": [{"oldText": "x", "newText": "y"}]}
    )
    call = classify_call(cache, tool, tool_input, ws)
    if call.verdict.verdict == "confirm":
        assert call.fingerprint is not None  # evidence can bind the question
    return call.verdict.verdict, call.verdict.rule_ids


ASKS = {
    "untracked": "notes.md",
    "untracked-dot": "./notes.md",
    "untracked-detour": "src/../notes.md",
    "uncommitted": "README.md",
    "uncommitted-staged": "src/main.c",
}


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("name", sorted(ASKS))
def test_overwriting_the_operator_s_work_asks(ws: Path, name: str, tool: str) -> None:
    (ws / "src" / "main.c").write_text("int main(void);\n")
    git(ws, "add", "src/main.c")
    cache = _cache(ws, Baseline.of(str(ws)))
    assert _verdict(cache, ws, tool, ASKS[name]) == ("confirm", ("builtin.overwrite-work",))


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_through_a_link_or_by_absolute_path_it_asks(ws: Path, tool: str) -> None:
    os.symlink("notes.md", ws / "link.md")
    cache = _cache(ws, Baseline.of(str(ws)))
    assert _verdict(cache, ws, tool, "link.md")[0] == "confirm"
    assert _verdict(cache, ws, tool, str(ws / "notes.md"))[0] == "confirm"


ALLOWED = {
    "new-file": "docs/new.md",
    "clean-tracked": "src/main.c",
    "ignored-output": "build/out.o",
    "new-beside": "fresh.md",
}


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_what_can_be_restored_or_was_not_there_does_not_ask(ws: Path, name: str, tool: str) -> None:
    cache = _cache(ws, Baseline.of(str(ws)))
    assert _verdict(cache, ws, tool, ALLOWED[name]) == ("allow", ())


def test_a_file_the_agent_made_or_edited_since_does_not_ask(ws: Path) -> None:
    cache = _cache(ws, Baseline.of(str(ws)))
    (ws / "fresh.md").write_text("the agent's own\n")
    (ws / "src" / "main.c").write_text("edited by the agent\n")
    assert _verdict(cache, ws, "write", "fresh.md")[0] == "allow"
    assert _verdict(cache, ws, "edit", "src/main.c")[0] == "allow"


def test_an_ignore_rule_or_a_commit_since_does_not_launder_the_work(ws: Path) -> None:
    cache = _cache(ws, Baseline.of(str(ws)))
    (ws / ".gitignore").write_text("*.md\n")
    git(ws, "add", "-f", "notes.md")
    git(ws, "commit", "-qm", "the agent's commit")
    assert _verdict(cache, ws, "write", "notes.md")[0] == "confirm"


def test_a_baseline_cut_short_asks_for_every_existing_file(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.import_module("guard._effects.baseline"), "_MAX_BASELINE", 1)
    baseline = Baseline.of(str(ws))
    assert not baseline.complete
    cache = _cache(ws, baseline)
    assert _verdict(cache, ws, "write", "src/main.c")[0] == "confirm"
    assert _verdict(cache, ws, "write", "brand-new.md")[0] == "allow"


def test_without_a_baseline_nothing_changes(ws: Path) -> None:
    cache = PolicyCache(ws.parent / "home")
    assert _verdict(cache, ws, "write", "notes.md")[0] == "allow"


def test_taking_the_baseline_never_writes_the_index(ws: Path) -> None:
    """A baseline is retaken at each answer, while other commands may run: a refreshed index
    would be a change under them (held as a conflict)."""
    os.utime(ws / "src" / "main.c", (1, 1))  # stat-dirty: a refresh would rewrite the index
    index = ws / ".git" / "index"
    before = index.stat().st_ctime_ns, index.read_bytes()
    Baseline.of(str(ws))
    assert (index.stat().st_ctime_ns, index.read_bytes()) == before


_STATES = ("clean", "modified", "staged", "untracked", "ignored", "missing", "agent-made")


@pytest.mark.slow  # a property test with a git repository per example: make test runs it
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    state=st.sampled_from(_STATES),
    tool=st.sampled_from(("write", "edit")),
    later=st.sampled_from(("none", "ignore-all", "commit-all", "exclude-all")),
)
def test_no_write_over_untracked_or_modified_work_runs_unasked(
    state: str, tool: str, later: str
) -> None:
    """Whatever the agent arranged after the baseline (an ignore file over everything, a
    commit of everything, an exclude), pi's write/edit over work the operator had asks, and
    over nothing of theirs it does not."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve()
        target = ws / "f.txt"
        if state in ("clean", "modified", "staged"):
            target.write_text("committed\n")
        (ws / ".gitignore").write_text("f.txt\n" if state == "ignored" else "")
        git(ws, "init", "-q")
        git(ws, "add", "-A")
        git(ws, "commit", "-qm", "start")
        if state in ("modified", "staged"):
            target.write_text("changed\n")
            if state == "staged":
                git(ws, "add", "f.txt")
        elif state in ("untracked", "ignored"):
            target.write_text("work\n")
        baseline = Baseline.of(str(ws))
        if state == "agent-made":
            target.write_text("the agent's\n")
        if later == "ignore-all":
            (ws / ".gitignore").write_text("*\n")
        elif later == "commit-all":
            git(ws, "add", "-A", "-f")
            git(ws, "commit", "-qm", "agent", "--allow-empty")
        elif later == "exclude-all":
            (ws / ".git" / "info" / "exclude").write_text("*\n")
        verdict, _ = _verdict(_cache(ws, baseline), ws, tool, "f.txt")
        at_risk = state in ("modified", "staged", "untracked")
        assert verdict == ("confirm" if at_risk else "allow"), (state, later)


# -- a workspace in no git repository: every file it had is work ------------------------------


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    ws = tmp_path / "plain"
    (ws / "docs").mkdir(parents=True)
    (ws / "node_modules" / "lib").mkdir(parents=True)
    (ws / "notes.txt").write_text("the operator's notes\n")
    (ws / "docs" / "plan.md").write_text("the operator's plan\n")
    (ws / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    return ws


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("path", ["notes.txt", "./docs/plan.md", "docs/../notes.txt"])
def test_outside_git_overwriting_a_file_the_operator_had_asks(
    plain: Path, tool: str, path: str
) -> None:
    cache = _cache(plain, Baseline.of(str(plain)))
    assert _verdict(cache, plain, tool, path) == ("confirm", ("builtin.overwrite-work",))
    assert _verdict(cache, plain, tool, str(plain / path))[0] == "confirm"


def test_outside_git_new_files_the_agent_s_own_and_regenerable_places_do_not_ask(
    plain: Path,
) -> None:
    cache = _cache(plain, Baseline.of(str(plain)))
    (plain / "fresh.txt").write_text("the agent's own\n")
    assert _verdict(cache, plain, "write", "brand-new.txt")[0] == "allow"
    assert _verdict(cache, plain, "edit", "fresh.txt")[0] == "allow"
    assert _verdict(cache, plain, "write", "node_modules/lib/index.js")[0] == "allow"


def test_outside_git_a_baseline_cut_short_asks_for_every_existing_file(
    plain: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.import_module("guard._effects.baseline"), "_MAX_BASELINE", 1)
    baseline = Baseline.of(str(plain))
    assert not baseline.complete
    cache = _cache(plain, baseline)
    (plain / "fresh.txt").write_text("the agent's own\n")
    assert _verdict(cache, plain, "write", "fresh.txt")[0] == "confirm"
    assert _verdict(cache, plain, "write", "brand-new.txt")[0] == "allow"


# -- work a command moved is work at its new name ---------------------------------------------

MOVES = {
    "rename": ("mv notes.md other.md", "other.md"),
    "into-a-new-dir": ("mkdir keep && mv notes.md keep/", "keep/notes.md"),
    "dir-renamed": ("mkdir -p stash && mv notes.md stash/ && mv stash kept", "kept/notes.md"),
    "cp-then-rm": ("cp notes.md copy.md && rm notes.md", "copy.md"),
    "cat-then-rm": ("cat notes.md > elsewhere.md; rm -f notes.md", "elsewhere.md"),
}


@pytest.mark.parametrize("name", sorted(MOVES))
@pytest.mark.parametrize("where", ["git", "plain"])
def test_work_moved_by_a_command_still_asks_before_a_write_over_it(
    overlay: Overlay, name: str, where: str
) -> None:
    ws = overlay.workspace
    if where == "git":
        make_repo(ws)  # notes.md is untracked work
    else:
        (ws / "notes.md").write_text("untracked work\n")
    baseline = Baseline.of(str(ws))
    script, moved_to = MOVES[name]
    _, _, result = review(overlay, script, baseline=baseline)
    assert result.decision == "applied", result  # a move loses nothing: not held
    assert (ws / moved_to).read_text() == "untracked work\n"
    cache = _cache(ws, baseline.after(result.effects, str(ws)))
    for tool in ("write", "edit"):
        assert _verdict(cache, ws, tool, moved_to)[0] == "confirm", (tool, moved_to)


def test_what_a_command_made_without_moving_work_stays_the_agent_s(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    baseline = Baseline.of(str(ws))
    _, _, result = review(overlay, "echo made > made.md", baseline=baseline)
    assert result.decision == "applied"
    assert baseline.after(result.effects, str(ws)) == baseline
    cache = _cache(ws, baseline.after(result.effects, str(ws)))
    assert _verdict(cache, ws, "write", "made.md")[0] == "allow"
