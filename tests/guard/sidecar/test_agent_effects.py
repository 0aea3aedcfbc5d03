"""Every variant of tests/e2e/test_effects_e2e.py's spellings and tests/e2e/test_history_e2e.py,
through a sidecar in process with the real sandbox (tests/guard/sidecar/agent.py): however a
command deletes what cannot be brought back, or a script loses or steers the repository's
history, the effects review holds it and Discard leaves the project as it was. The
end-to-end files keep representatives and take their tables from here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.effects.test_review import git
from tests.guard.sidecar.agent import agent, world_project
from tests.guard.sidecar.test_sidecar_methods import records

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

SPELLINGS = {
    "node-eval-equals": "node --eval=\"require('fs').rmSync('a', {recursive: true})\"",
    "ed-bang": "printf '!rm -rf b\\nq\\n' | ed -s",
    "ed-truncates-env": "printf 'w .env\\nq\\n' | ed -s",
    "tclsh": "echo 'file delete -force c' | tclsh",
    "cmake-rm": "cmake -E rm -rf build",
    "tar-remove-files": "tar --remove-files -cf /tmp/t.tar dist",
    "zip-move": "zip -qm /tmp/r.zip README.md",
    "mv-to-private-tmp": "mv README.md /tmp/x.md",
}


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path of the project but git's and pi's: its content, link target or "dir"."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel == ".git" or rel.startswith(".git/") or rel == ".pi" or rel.startswith(".pi/"):
            continue
        if path.is_symlink():
            out[rel] = "link:" + str(path.readlink())
        elif path.is_file():
            out[rel] = path.read_bytes()
        else:
            out[rel] = "dir"
    return out


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_each_spelling_deletes_nothing_without_the_operator(tmp_path: Path, name: str) -> None:
    project = world_project(tmp_path.resolve() / "project")
    before = snapshot(project)
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(SPELLINGS[name])
    assert outcome.held, outcome
    assert snapshot(project) == before
    assert records(tmp_path / "home", "effects.reviewed")[-1]["decision"] == "held"
    (resolved,) = records(tmp_path / "home", "effects.resolved")
    assert resolved["decision"] == "discarded"


def tagged_repository(project: Path) -> None:
    """A release tag on a commit no branch holds, everything packed."""
    (project / "app.py").write_text("print('app')\n")
    git(project, "init", "-q")
    git(project, "add", "app.py")
    git(project, "commit", "-qm", "start")
    git(project, "checkout", "-q", "-b", "spike")
    (project / "spike.py").write_text("spike = 1\n")
    git(project, "add", "spike.py")
    git(project, "commit", "-qm", "spike")
    git(project, "tag", "-a", "v0.9", "-m", "the spike's release")
    git(project, "checkout", "-q", "-")
    git(project, "branch", "-q", "-D", "spike")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q")


def git_state(project: Path) -> dict[str, bytes]:
    git_dir = project / ".git"
    return {
        str(p.relative_to(git_dir)): p.read_bytes()
        for p in git_dir.rglob("*")
        if p.is_file() and p.name not in ("index", "ORIG_HEAD")
    }


SCRIPTS = {
    "python": 'python3 -c "import subprocess; subprocess.run({!r}, shell=True)"',
    "script-file": "printf '%s\\n' {!r} > /tmp/s.sh && sh /tmp/s.sh",
}
LOSSES = {
    "tag-moved": "git tag -f v0.9 HEAD",
    "pack-rewritten": "chmod -R u+w .git/objects/pack &&"
    " find .git/objects/pack -name *.pack -exec truncate -s 100 {} +",
    "alternates": "echo /tmp/elsewhere/objects > .git/objects/info/alternates",
    "attributes": "echo app.py -diff > .git/info/attributes",
}


@pytest.mark.parametrize("spelling", sorted(SCRIPTS))
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_script_losing_or_steering_history_is_held(
    tmp_path: Path, name: str, spelling: str
) -> None:
    project = world_project(tmp_path.resolve() / "project")
    tagged_repository(project)
    before = git_state(project)
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(SCRIPTS[spelling].format(LOSSES[name]))
    assert outcome.held, outcome
    assert git_state(project) == before
