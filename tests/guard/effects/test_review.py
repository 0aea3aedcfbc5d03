"""Which effects are held, and why; what is applied at once; a crash half-way; resolving.

Each case runs a real command on a real overlay of a real workspace (a git repository where
the case needs one) and reviews its layer as the sidecar does.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from guard._effects import Reviewer, apply_effects, read_effects, recover
from guard._effects import apply as apply_module
from guard._hermetic import git_env, system_program
from tests.guard.effects.conftest import Overlay, copy_tree, snapshot


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        [system_program("git"), "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
         *args],
        env=git_env(), check=True, capture_output=True,
    )  # fmt: skip


def make_repo(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "main.c").write_text("int main;\n")
    (ws / "README.md").write_text("readme\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("object\n")
    (ws / "notes.md").write_text("untracked work\n")


def review(overlay: Overlay, script: str, **kwargs: object):  # type: ignore[no-untyped-def]
    layer, _ = overlay.run(script)
    reviewer = Reviewer(overlay.layers)
    protected = kwargs.pop("protected", lambda path: os.path.basename(path).startswith(".env"))
    return (
        reviewer,
        layer,
        reviewer.review(
            layer,
            str(overlay.workspace),
            protected=protected,
            **kwargs,  # type: ignore[arg-type]
        ),
    )


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("rm notes.md", "untracked"),
        ("echo changed > src/main.c; echo again >> src/main.c; rm -rf src", None),
        ("rm -rf build *.log", None),
        ("rm -rf .git", "repository"),
        ("echo SECRET=1 > .env", "protected"),
        ("mkdir conf && echo SECRET=1 > conf/.env.local", "protected"),
    ],
)
def test_what_is_held_in_a_repository(overlay: Overlay, script: str, reason: str | None) -> None:
    make_repo(overlay.workspace)
    before = snapshot(overlay.workspace)
    reviewer, layer, result = review(overlay, script)
    if reason is None:
        assert result.decision == "applied", result.held
        assert reviewer.held() == []
    else:
        assert result.decision == "held"
        assert {h.reason for h in result.held} == {reason}
        assert reviewer.held() == [layer]
        kept = snapshot(overlay.workspace)
        held_paths = {h.effect.path for h in result.held}
        assert {k: v for k, v in kept.items() if k.split("/")[0] in held_paths} == {
            k: v for k, v in before.items() if k.split("/")[0] in held_paths
        }


def test_uncommitted_work_is_held_and_committed_work_is_not(overlay: Overlay) -> None:
    make_repo(overlay.workspace)
    (overlay.workspace / "src" / "main.c").write_text("int main; /* mine */\n")
    _, _, result = review(overlay, "echo formatted > src/main.c; echo x > README.md")
    assert [(h.effect.path, h.reason) for h in result.held] == [("src/main.c", "uncommitted")]
    assert (overlay.workspace / "README.md").read_text() == "x\n"  # applied at once
    assert (overlay.workspace / "src" / "main.c").read_text() == "int main; /* mine */\n"


def test_without_a_repository_every_loss_is_held(overlay: Overlay) -> None:
    (overlay.workspace / "data.csv").write_text("1,2\n")
    _, _, result = review(overlay, "rm data.csv; echo new > other.txt")
    assert [(h.effect.path, h.reason) for h in result.held] == [("data.csv", "not-in-git")]
    assert (overlay.workspace / "other.txt").read_text() == "new\n"


def test_moved_content_is_not_lost(overlay: Overlay) -> None:
    (overlay.workspace / "data").mkdir()
    (overlay.workspace / "data" / "a.csv").write_text("1,2\n")
    _, _, result = review(overlay, "mv data archive && mv archive/a.csv archive/b.csv")
    assert result.decision == "applied", result.held
    assert (overlay.workspace / "archive" / "b.csv").read_text() == "1,2\n"
    assert not (overlay.workspace / "data").exists()


def test_after_a_yes_what_goes_beyond_its_targets_is_held(overlay: Overlay) -> None:
    make_repo(overlay.workspace)
    build = str(overlay.workspace / "build")
    _, _, inside = review(overlay, "rm -rf build", approved=(build,))
    assert inside.decision == "applied"
    _, _, beyond = review(overlay, "rm -rf src", approved=(build,))
    assert [(h.effect.path, h.reason) for h in beyond.held] == [("src", "beyond-approval")]


def test_a_link_that_appeared_above_a_path_is_a_conflict_never_applied(overlay: Overlay) -> None:
    ws = overlay.workspace
    (ws / "build").mkdir()
    (ws / "build" / "keep.txt").write_text("keep\n")
    (ws / "src").mkdir()
    (ws / "src" / "keep.txt").write_text("source\n")
    layer, _ = overlay.run("rm build/keep.txt")
    # the workspace changes under the command: build becomes a link to src
    (ws / "build" / "keep.txt").unlink()
    (ws / "build").rmdir()
    (ws / "build").symlink_to("src")
    reviewer = Reviewer(overlay.layers)
    result = reviewer.review(layer, str(ws), protected=lambda _p: False)
    assert [h.reason for h in result.held] == ["conflict"]
    reviewer.resolve(layer, apply=True)
    assert (ws / "src" / "keep.txt").read_text() == "source\n"  # never through the link


def test_resolving_applies_or_discards_exactly_what_was_held(overlay: Overlay) -> None:
    (overlay.workspace / "a.txt").write_text("a\n")
    (overlay.workspace / "b.txt").write_text("b\n")
    reviewer, first, _ = review(overlay, "rm a.txt")
    _, second, _ = review(overlay, "echo overwritten > b.txt")
    assert sorted(reviewer.held()) == sorted([first, second])
    pending = reviewer.pending(first)
    done = reviewer.resolve(first, apply=True)
    assert done.digest == pending.digest
    assert not (overlay.workspace / "a.txt").exists()
    reviewer.resolve(second, apply=False)
    assert (overlay.workspace / "b.txt").read_text() == "b\n"
    assert reviewer.held() == []
    assert not (overlay.layers / first).exists() and not (overlay.layers / second).exists()
    with pytest.raises(Exception, match="holds nothing"):
        reviewer.resolve(first, apply=True)


def test_mount_points_the_plan_made_are_no_effect(overlay: Overlay) -> None:
    reviewer = Reviewer(overlay.layers)
    layer, _ = overlay.run("mkdir .pi")
    result = reviewer.review(layer, str(overlay.workspace), protected=lambda _p: True,
                             mount_points=(str(overlay.workspace / ".pi"),))  # fmt: skip
    assert result.decision == "empty"
    assert not (overlay.workspace / ".pi").exists()


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_crash_half_way_is_finished_by_recovery(
    overlay: Overlay, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    ws = overlay.workspace
    (ws / "d").mkdir()
    (ws / "d" / "x").write_text("x\n")
    (ws / "f").write_text("file\n")
    (ws / "g").write_text("g\n")
    script = "rm -rf d && echo now-a-file > d; rm f && mkdir f && echo in > f/y; echo new > g"
    plain = ws.parent / "plain"
    copy_tree(ws, plain)
    subprocess.run(["/bin/sh", "-c", script], cwd=plain, check=True)
    layer, upper = overlay.run(script)
    effects = read_effects(upper, ws)
    real_move = apply_module._move
    calls = {"n": 0}

    def crashing_move(src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise OSError("power lost")
        real_move(src, dst)

    monkeypatch.setattr(apply_module, "_move", crashing_move)
    with pytest.raises(OSError, match="power lost"):
        apply_effects(effects, overlay.layers / layer, upper, ws)
    monkeypatch.setattr(apply_module, "_move", real_move)
    assert recover(overlay.layers) == [overlay.layers / layer]
    assert snapshot(ws) == snapshot(plain)
    assert recover(overlay.layers) == []  # committed now


def git_aware_protected(workspace: Path):  # type: ignore[no-untyped-def]
    """The sidecar's predicate: what the built-in policy protects for writing."""
    from guard._policy import Policy

    policy = Policy.load(workspace.parent / "guard-home", workspace)
    ignore = frozenset({"builtin.git-internals", "builtin.outside-workspace"})
    return lambda path: policy.protects_write(path, workspace, ignore=ignore)


@pytest.mark.parametrize(
    ("script", "held"),
    [
        ("git init -q", False),
        ("git init -q sub && echo x > sub/f", False),
        ("git init -q && printf '#!/bin/sh\\necho hooked\\n' > .git/hooks/pre-commit", True),
        ("git init -q && git config core.fsmonitor 'sh -c evil'", True),
        ("git init -q sub && git -C sub config alias.st '!evil'", True),
        (
            "mkdir -p deep/er && git init -q deep/er/repo && echo x > deep/er/repo/.git/hooks/post-checkout",
            True,
        ),
    ],
)
def test_a_repository_the_command_made_is_held_only_when_armed(
    overlay: Overlay, script: str, held: bool
) -> None:
    (overlay.workspace / "README.md").write_text("x\n")
    _, _, result = review(overlay, script, protected=git_aware_protected(overlay.workspace))
    assert (result.decision == "held") is held, result
    if held:
        assert {h.reason for h in result.held} == {"protected"}
        assert not any((overlay.workspace / p).exists() for p in (".git/hooks/pre-commit",))


def test_special_files_are_compared_without_opening_them(overlay: Overlay) -> None:
    os.mkfifo(overlay.workspace / "pipe")
    # A FIFO opened for comparison would wait for a writer forever: it is never opened.
    reviewer, layer, result = review(overlay, "chmod 600 pipe && mkfifo other && touch plain")
    assert sorted(e.path for e in result.effects) == ["other", "pipe", "plain"]
    assert [h.effect.path for h in result.held] == ["pipe"]  # not in git: its change waits
    assert (overlay.workspace / "other").exists() and (overlay.workspace / "plain").exists()
    reviewer.resolve(layer, apply=True)
    assert (overlay.workspace / "pipe").stat().st_mode & 0o777 == 0o600


def test_a_command_that_left_no_layer_is_an_error_not_an_empty_review(overlay: Overlay) -> None:
    reviewer = Reviewer(overlay.layers)
    with pytest.raises(Exception, match="nothing of this command was applied"):
        reviewer.review("never-made-layer", str(overlay.workspace), protected=lambda _p: False)
    for bad in ("../escape", "never-made-layer\n", "never-made-layer/.."):
        with pytest.raises(Exception, match="not a layer id"):
            reviewer.review(bad, str(overlay.workspace), protected=lambda _p: False)


def test_arming_an_existing_repository_deep_in_the_workspace_is_held(overlay: Overlay) -> None:
    """Deeper than the sandbox's read-only mounts reach: the review still holds it."""
    deep = overlay.workspace / "vendor" / "lib" / "dep"
    deep.mkdir(parents=True)
    git(deep, "init", "-q")
    _, _, result = review(
        overlay,
        "printf '#!/bin/sh\\necho hooked\\n' > vendor/lib/dep/.git/hooks/pre-commit; "
        "git -C vendor/lib/dep config core.fsmonitor evil",
        protected=git_aware_protected(overlay.workspace),
    )
    assert {(h.effect.path, h.reason) for h in result.held} == {
        ("vendor/lib/dep/.git/hooks/pre-commit", "protected"),
        ("vendor/lib/dep/.git/config", "protected"),
    }
    assert not (deep / ".git" / "hooks" / "pre-commit").exists()
