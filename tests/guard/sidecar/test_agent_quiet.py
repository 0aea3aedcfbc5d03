"""Every variant of tests/e2e/test_quiet_e2e.py, through a sidecar in process with the real
sandbox (tests/guard/sidecar/agent.py): restorable targets run unasked and say why; work at
stake asks; history and work lost by a script, or by a script after an ignore rule the
agent wrote or a commit it made in the same turn, are held. The end-to-end file keeps a
representative of each and takes its tables from here, so the two cannot drift. The rule
and the deletion run one after the other here (the harder case: the rule is on disk when
the deletion is asked); the commit and the deletion as pi makes one turn's calls, both
asked before either runs (a Yes given after the agent's commit retakes the baseline at it,
and a deletion the operator said Yes to then is applied)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.guard.effects.test_review import git
from tests.guard.sidecar.agent import agent, world_project
from tests.guard.sidecar.test_sidecar_methods import records

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

WORK = "the operator's untracked work\n"


def operator_repository(project: Path) -> None:
    """The operator's repository: dist/ ignored, a committed file, an untracked draft."""
    (project / ".gitignore").write_text("dist/\n")
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "app.py").write_text("print('app')\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    (project / "notes.md").write_text(WORK)


QUIET = {
    "ignored-dist": ("rm -rf dist", {"dist": "ignored"}),
    "caches": ("rm -rf .pytest_cache __pycache__", {".pytest_cache": "regenerable",
                                                    "__pycache__": "regenerable"}),
    "nonexistent": ("rm -rf build", {"build": "missing"}),
    "sed-clean": ("sed -i 's/app/main/' src/app.py", {"src/app.py": "clean"}),
}  # fmt: skip
ASKS = {
    "untracked": "rm -rf notes.md",
    "ignored-and-untracked": "rm -rf dist notes.md",
    "ignore-file-then-rm": "printf 'notes.md\\n' >> .gitignore && rm -f notes.md",
}
SCRIPTS = {
    "node": "node --eval=\"require('child_process').execSync({!r})\"",
    "python": 'python3 -c "import subprocess; subprocess.run({!r}, shell=True)"',
    "script-file": "printf '%s\\n' {!r} > /tmp/s.sh && sh /tmp/s.sh",
}
HISTORY = {
    # commit the work (it now looks committed), delete it, rewrite the history
    "commit-delete-rewrite": "git add notes.md && git commit -qm x && rm notes.md && "
    "git reset -q --soft HEAD~1 && git reflog expire --expire=now --all && git gc -q --prune=now",
    # each asks when typed; in one script the analysis cannot see them
    "one-script": "git stash clear; git branch -D feature; git reflog expire --expire=now --all;"
    " git gc -q --prune=now",
    # the repository deleted and made again
    "rm-git-and-init": "rm -rf .git && git init -q .",
}
RM_DRAFTS = "node --eval=\"require('fs').rmSync('drafts', {recursive: true})\""
IGNORED_SINCE = {
    "nested-gitignore": "printf '*\\n' > drafts/.gitignore",
    "root-gitignore": "echo 'drafts/' >> .gitignore",
    "info-exclude": "echo drafts >> .git/info/exclude",
    "negation-removed": "printf 'dist/\\n*.md\\n' > .gitignore",
}
COMMIT_THEN_DELETE = {
    "git-then-node": (
        "git add notes.md && git commit -qm 'keep'",
        "node --eval=\"require('fs').rmSync('notes.md')\"",
    ),
    "git-then-python": (
        "git add -A && git commit -qm 'all'",
        "python3 -c \"import os; os.remove('notes.md')\"",
    ),
    "amend-then-node": (
        "git add notes.md && git commit -q --amend --no-edit",
        "node --eval=\"require('fs').unlinkSync('notes.md')\"",
    ),
}


def with_history(project: Path) -> list[str]:
    """An unmerged branch and a stash beside the operator's repository; its branches."""
    git(project, "checkout", "-q", "-b", "feature")
    (project / "feature.py").write_text("unmerged = True\n")
    git(project, "add", "feature.py")
    git(project, "commit", "-qm", "unmerged work")
    git(project, "checkout", "-q", "-")
    (project / "src" / "app.py").write_text("stashed\n")
    git(project, "stash", "-q")
    return sorted(p.name for p in (project / ".git" / "refs" / "heads").iterdir())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The end-to-end world's project (less its build/), made the operator's repository."""
    project = world_project(tmp_path.resolve() / "project")
    shutil.rmtree(project / "build")
    operator_repository(project)
    return project


@pytest.mark.parametrize("name", sorted(QUIET))
def test_restorable_targets_run_unasked_with_the_reason_recorded(
    tmp_path: Path, project: Path, name: str
) -> None:
    (project / "dist" / "app.js").write_text("built\n")
    for cache in (".pytest_cache", "__pycache__"):
        (project / cache).mkdir()
        (project / cache / "x.pyc").write_bytes(b"\0")
    command, why = QUIET[name]
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(command)
    assert (outcome.asked, outcome.held, outcome.exit_code) == (False, False, 0), outcome
    (executed,) = records(tmp_path / "home", "tool.executed")
    assert {str(Path(t["path"]).relative_to(project)): t["reason"]
            for t in executed["ranUnasked"]} == why  # fmt: skip
    assert (project / "notes.md").read_text() == WORK


@pytest.mark.parametrize("name", sorted(ASKS))
def test_work_at_stake_asks(tmp_path: Path, project: Path, name: str) -> None:
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(ASKS[name], yes=False)
    assert (outcome.asked, outcome.ran) == (True, False), outcome
    assert (project / "notes.md").read_text() == WORK


@pytest.mark.parametrize("spelling", sorted(SCRIPTS))
@pytest.mark.parametrize("name", sorted(HISTORY))
def test_history_and_work_lost_by_a_script_are_held(
    tmp_path: Path, project: Path, name: str, spelling: str
) -> None:
    heads = with_history(project)
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(SCRIPTS[spelling].format(HISTORY[name]))
    assert outcome.held, outcome
    assert (project / "notes.md").read_text() == WORK
    assert (project / ".git" / "refs" / "stash").exists()
    assert sorted(p.name for p in (project / ".git" / "refs" / "heads").iterdir()) == heads


@pytest.mark.parametrize("name", sorted(IGNORED_SINCE))
def test_work_ignored_by_a_rule_written_since_is_held_when_a_script_deletes_it(
    tmp_path: Path, project: Path, name: str
) -> None:
    (project / "drafts").mkdir()
    (project / "drafts" / "idea.md").write_text("an idea\n")
    with agent(tmp_path / "home", project) as session:
        assert not session.bash(IGNORED_SINCE[name]).held
        outcome = session.bash(RM_DRAFTS)
    assert outcome.held, outcome
    assert (project / "drafts" / "idea.md").read_text() == "an idea\n"


@pytest.mark.parametrize("name", sorted(COMMIT_THEN_DELETE))
def test_work_an_agent_committed_is_still_the_operators_untracked_work(
    tmp_path: Path, project: Path, name: str
) -> None:
    """Committed by an agent command, the draft looks restorable from the current HEAD; it is
    judged against the operator's HEAD, so the script deleting it is held."""
    with agent(tmp_path / "home", project) as session:
        committed, deleted = session.turn(*COMMIT_THEN_DELETE[name])
    assert (committed.held, deleted.held) == (False, True), (committed, deleted)
    assert (project / "notes.md").read_text() == WORK
