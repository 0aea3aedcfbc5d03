"""What a command did, judged after it ran: the effects review in the real pi.

Every agent command runs on a copy-on-write layer of the workspace. Deleting or overwriting
what cannot be brought back is held for the operator, however the command was spelled. Here
the operator answers Yes to any dialog *before* a call (so the analysis is not what stops
it) and Discard or Apply to the held effects. Runs on both pinned pi versions.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from guard._hermetic import git_env, system_program
from tests.guard.sidecar.test_agent_effects import SPELLINGS
from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, effects_dialogs, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def discard(request: Mapping[str, Any]) -> bool:
    """Yes to the call's dialog, Discard to what its command held back."""
    return not is_effects_dialog(request)


def apply(_request: Mapping[str, Any]) -> bool:
    return True


def snapshot(root: Path) -> dict[str, bytes | str]:
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


# Every spelling runs in process, through a sidecar with the real sandbox:
# tests/guard/sidecar/test_agent_effects.py (the table is its). Through the real pi, one
# asked before it runs (inline code) and one not asked at all, both held and discarded.
@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("name", ["node-eval-equals", "mv-to-private-tmp"])
def test_each_spelling_deletes_nothing_without_the_operator(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    before = snapshot(world.project)
    model_server.add_scenario(f"effects-{name}", turns(bash(SPELLINGS[name])))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:effects-{name}", discard)
    (held,) = effects_dialogs(events)
    assert "Held:" in held["message"]
    (end,) = tool_ends(events)
    assert "[reason: effects-discarded]" in result_text(end), result_text(end)
    assert snapshot(world.project) == before
    reviewed = [r["data"] for r in world.audit("effects.reviewed")]
    assert reviewed[-1]["decision"] == "held"
    (resolved,) = [r["data"] for r in world.audit("effects.resolved")]
    assert resolved["decision"] == "discarded"


@pytest.mark.every_pi
def test_with_apply_the_change_lands_exactly_and_evidence_is_minted(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario(
        # mv is not destructive to the analysis: nothing is asked before the call
        "effects-apply",
        turns(bash("mv a /tmp/gone && echo new > a.txt && chmod +x a.txt")),
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:effects-apply", apply)
    assert len(effects_dialogs(events)) == 1
    assert not (world.project / "a").exists()
    assert (world.project / "a.txt").read_text() == "new\n"
    assert (world.project / "a.txt").stat().st_mode & 0o100
    (resolved,) = [r["data"] for r in world.audit("effects.resolved")]
    assert resolved["decision"] == "applied" and resolved["evidenceId"].startswith("oce_")
    (end,) = tool_ends(events)
    assert "applied what this command held back" in result_text(end)


def test_what_loses_nothing_applies_without_asking(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario(
        "effects-safe",
        turns(bash("mkdir -p src/pkg && echo 'x = 1' > src/pkg/m.py && mv src/pkg src/lib")),
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:effects-safe", discard)
    assert effects_dialogs(events) == []
    assert (world.project / "src" / "lib" / "m.py").read_text() == "x = 1\n"
    assert not (world.project / "src" / "pkg").exists()


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        [system_program("git"), "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
         *args],
        env=git_env(),
        check=True,
        capture_output=True,
    )  # fmt: skip


def test_git_stash_of_untracked_work_is_held_and_commits_are_not(
    world: World, model_server: ScriptedModelServer
) -> None:
    git(world.project, "init", "-q")
    git(world.project, "add", "-A")
    git(world.project, "commit", "-qm", "start")
    (world.project / "notes.md").write_text("untracked work\n")
    model_server.add_scenario(
        "effects-git",
        turns(
            bash("echo more >> README.md && git add README.md && git commit -qm more"),
        ),
    )
    model_server.add_scenario("effects-stash", turns(bash("git stash -u")))
    with world.rpc() as pi:
        committed = pi.prompt("scenario:effects-git", discard)
        stashed = pi.prompt("scenario:effects-stash", discard)
    assert effects_dialogs(committed) == []
    assert "more" in (world.project / "README.md").read_text()
    assert len(effects_dialogs(stashed)) == 1
    assert (world.project / "notes.md").read_text() == "untracked work\n"


def test_a_link_swapped_in_after_a_yes_is_held(
    world: World, model_server: ScriptedModelServer
) -> None:
    """pi asks about every call of a turn, then runs them in parallel: the operator says yes
    to deleting build/, a call it allowed swaps build for a link to src, and what the
    approved command then deletes through the link goes beyond the yes."""
    src = world.project / "src"
    src.mkdir()
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    model_server.add_scenario(
        "effects-swap",
        turns(bash("sleep 2; rm -rf build/"), bash("mv build build.old && ln -s src build")),
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:effects-swap", discard, timeout=90)
    assert (src / "main.c").read_text() == "int main(void) { return 0; }\n"
    held = effects_dialogs(events)
    assert held, [result_text(e) for e in tool_ends(events)]
    assert "beyond what you said yes to" in held[0]["message"] or "main.c" in held[0]["message"]


def test_tmp_lasts_for_the_session_and_goes_with_it(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario("tmp-write", turns(bash("echo patch-1f2e > /tmp/patch.diff")))
    model_server.add_scenario("tmp-read", turns(bash("cat /tmp/patch.diff")))
    with world.rpc() as pi:
        pi.prompt("scenario:tmp-write", discard)
        events = pi.prompt("scenario:tmp-read", discard)
    (end,) = tool_ends(events)
    assert "patch-1f2e" in result_text(end)
    assert not list((world.home / "sessions").glob("*/tmp"))  # removed when the session ended
    assert (
        not Path("/tmp/patch.diff").exists()
        or "patch-1f2e" not in Path("/tmp/patch.diff").read_text()
    )  # never the host's /tmp


def test_a_path_the_sandbox_refused_is_named_for_the_model_and_the_operator(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario("refused", turns(bash("echo x > ~/notes.txt")))
    with world.rpc() as pi:
        events = pi.prompt("scenario:refused", discard)
    (end,) = tool_ends(events)
    text = result_text(end)
    assert "operator-guard: " in text and "notes.txt" in text, text
    assert "[sandbox]" not in text  # the way to widen it is the operator's, not the model's
    hints = [
        e.get("message", "")
        for e in events
        if e.get("type") == "extension_ui_request" and e.get("method") == "notify"
    ]
    assert any("[sandbox] readable" in h for h in hints), hints


def test_what_the_operators_own_rule_allows_is_not_held_again(world: World) -> None:
    """A user rule relaxing ``rm`` of ``build`` lets ``rm -rf build`` run unasked; the effects
    review then applies it (before, it held the deletion and a No discarded what the rule
    allowed). What the command does beyond the rule's targets is still held."""
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text(
        '[[rule]]\nid = "me.clean-build"\nverdict = "allow"\nprogram = ["rm"]\n'
        'target_paths = ["build", "dist"]\nrelaxes = ["builtin.rm"]\n'
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", discard)
    assert effects_dialogs(events) == []
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert not (world.project / "build").exists()


LAUNDERING = {
    # an ignore file written over the work, then a script the analysis cannot see deletes it
    "ignore-file": (
        "printf '*\\n' > drafts/.gitignore",
        "node --eval=\"require('fs').rmSync('drafts', {recursive: true})\"",
    ),
    # the work renamed into a never-work name, then deleted there as regenerable
    "pyc-rename": (
        "node --eval=\"require('fs').renameSync('drafts/idea.md', 'drafts/idea.pyc')\"",
        "node --eval=\"require('fs').rmSync('drafts/idea.pyc')\"",
    ),
}


@pytest.mark.parametrize("name", sorted(LAUNDERING))
def test_work_is_not_laundered_through_an_earlier_command(
    world: World, model_server: ScriptedModelServer, name: str
) -> None:
    """Judged against what the operator had when the session started, never against what an
    earlier agent command arranged: the untracked draft survives (Discard)."""
    git(world.project, "init", "-q")
    git(world.project, "add", "-A")
    git(world.project, "commit", "-qm", "start")
    (world.project / "drafts").mkdir()
    (world.project / "drafts" / "idea.md").write_text("an idea\n")
    first, second = LAUNDERING[name]
    model_server.add_scenario(f"launder-{name}", turns(bash(first), bash(second)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:launder-{name}", discard)
    shown = effects_dialogs(events)
    titles = [d["title"] for d in shown]
    # Both commands come in one turn: the second runs beside the first. Where it runs after
    # the first's creation (the copy) was applied, its deletion of that copy is held as a
    # change under the command: a second dialog, never a loss.
    conflicts = [d for d in shown if "the workspace changed under the command" in d["message"]]
    assert len(shown) == 1 or (len(shown) == 2 and conflicts), titles
    assert (world.project / "drafts" / "idea.md").read_text() == "an idea\n"


@pytest.mark.parametrize(
    ("command", "dialogs"),
    [
        # a yes to git doing it, seen in the dialog: applied, no second dialog
        ("git stash clear", 0),
        # a yes to a script that hid it: the stash lost inside .git is held
        ("node --eval=\"require('child_process').execSync('git stash clear')\"", 1),
    ],
    ids=["git-typed", "hidden-in-a-script"],
)
def test_a_stash_lost_inside_git_is_held_unless_the_yes_was_to_git(
    world: World, model_server: ScriptedModelServer, command: str, dialogs: int
) -> None:
    git(world.project, "init", "-q")
    git(world.project, "add", "-A")
    git(world.project, "commit", "-qm", "start")
    (world.project / "README.md").write_text("stashed work\n")
    git(world.project, "stash", "-q")
    name = f"stash-{dialogs}"
    model_server.add_scenario(name, turns(bash(command)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{name}", discard)
    assert len(effects_dialogs(events)) == dialogs
    stash = (world.project / ".git" / "refs" / "stash").exists()
    assert stash is (dialogs == 1)  # discarded: the stash is still there
