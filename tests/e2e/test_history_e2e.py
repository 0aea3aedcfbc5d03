"""What is inside the repository, in the real pi (both pinned versions): a script that moves
a tag whose old value nothing else names, rewrites a pack in place, or writes a file that
steers the operator's git (alternates, info/attributes) runs unasked and is held by the
effects review; the operator discards, and the repository is as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, effects_dialogs, result_text, tool_ends, turns
from .test_effects_e2e import git

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def _repository(project: Path) -> None:
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


def _state(project: Path) -> dict[str, bytes]:
    git_dir = project / ".git"
    return {
        str(p.relative_to(git_dir)): p.read_bytes()
        for p in git_dir.rglob("*")
        if p.is_file() and p.name not in ("index", "ORIG_HEAD")
    }


@pytest.mark.parametrize("spelling", sorted(SCRIPTS))
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_script_losing_or_steering_history_is_held(
    world: World, model_server: ScriptedModelServer, name: str, spelling: str
) -> None:
    _repository(world.project)
    before = _state(world.project)
    scenario = f"history-inside-{name}-{spelling}"
    model_server.add_scenario(scenario, turns(bash(SCRIPTS[spelling].format(LOSSES[name]))))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{scenario}", lambda r: not is_effects_dialog(r), timeout=90)
    assert effects_dialogs(events), [result_text(e) for e in tool_ends(events)]
    assert _state(world.project) == before
