"""Effects the review must hold, each in a spelling that a loosened judge would let through:
names that only look like git's own, a path replaced by another kind, an ignore pattern that
is a prefix of a name, conflicts and links at apply time (issue: tests that would notice)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from guard._effects import Reviewer, apply_effects, read_effects, recover
from guard._effects import apply as apply_module
from tests.guard.effects.conftest import Overlay, snapshot
from tests.guard.effects.test_review import git, make_repo, review


@pytest.mark.parametrize(
    ("prepare", "script"),
    [
        (
            "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml",
            "rm -rf .github",
        ),
        ("echo 'dist/' >> .gitignore", "echo '' > .gitignore"),
        ("echo '* text=auto' > .gitattributes", "rm .gitattributes"),
        ("printf '[submodule \"x\"]\\n' > .gitmodules", "echo > .gitmodules"),
        ("mkdir -p .gitlab && echo 'stages: [t]' > .gitlab/ci.yml", "rm -r .gitlab"),
    ],
    ids=[".github", ".gitignore", ".gitattributes", ".gitmodules", ".gitlab"],
)
def test_work_in_names_that_start_like_git_s_own_is_held(
    overlay: Overlay, prepare: str, script: str
) -> None:
    make_repo(overlay.workspace)
    subprocess.run(["/bin/sh", "-c", prepare], cwd=overlay.workspace, check=True)
    before = snapshot(overlay.workspace)
    _, _, result = review(overlay, script)
    assert result.decision == "held", result
    assert snapshot(overlay.workspace) == before


@pytest.mark.parametrize(
    "script",
    [
        "rm -rf drafts && echo gone > drafts",  # an untracked folder becomes a file
        "rm notes.md && ln -s README.md notes.md",  # an untracked file becomes a link
        "rm -rf drafts && ln -s src drafts",  # a folder becomes a link
    ],
)
def test_a_path_replaced_by_another_kind_is_held(overlay: Overlay, script: str) -> None:
    make_repo(overlay.workspace)
    (overlay.workspace / "drafts").mkdir()
    (overlay.workspace / "drafts" / "idea.md").write_text("an idea\n")
    before = snapshot(overlay.workspace)
    _, _, result = review(overlay, script)
    assert result.decision == "held", result
    assert snapshot(overlay.workspace) == before


def test_an_ignore_pattern_that_is_a_prefix_of_a_name_does_not_cover_it(
    overlay: Overlay,
) -> None:
    make_repo(overlay.workspace)
    ws = overlay.workspace
    (ws / ".gitignore").write_text("build/\nlogs/x.log\n")
    git(ws, "commit", "-qam", "ignore one log")
    (ws / "logs").mkdir()
    (ws / "logs" / "x.log").write_text("regenerated\n")
    (ws / "logs" / "x.logbook").write_text("a week of notes\n")
    _, _, ignored = review(overlay, "rm logs/x.log")
    assert ignored.decision == "applied", ignored
    (ws / "logs" / "x.log").write_text("regenerated\n")
    for script in ("rm logs/x.logbook", "rm -rf logs"):  # alone, and beside the ignored one
        _, _, kept = review(overlay, script)
        assert kept.decision == "held", (script, kept)
        assert (ws / "logs" / "x.logbook").read_text() == "a week of notes\n"


def _swap_for_link(folder: Path, outside: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(outside)


def test_a_folder_swapped_for_a_link_after_the_review_is_never_written_through(
    overlay: Overlay, tmp_path: Path
) -> None:
    """The operator applies a held layer after a folder of the workspace became a link to
    outside it: nothing is written through the link."""
    make_repo(overlay.workspace)
    ws = overlay.workspace
    (ws / "out").mkdir()
    (ws / "out" / "old.txt").write_text("old\n")
    reviewer, layer, result = review(overlay, "rm notes.md; echo new > out/report.txt")
    assert result.decision == "held"
    outside = tmp_path / "outside"
    outside.mkdir()
    _swap_for_link(ws / "out", outside)
    reviewer.resolve(layer, apply=True)
    assert list(outside.iterdir()) == []
    assert not (ws / "notes.md").exists()  # the rest of the layer was applied


def test_recovery_never_writes_through_a_link_either(
    overlay: Overlay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = overlay.workspace
    (ws / "a").mkdir()
    (ws / "out").mkdir()
    (ws / "out" / "old.txt").write_text("old\n")
    layer, upper = overlay.run("echo 1 > a/one; echo 2 > out/two; echo 3 > out/three")
    effects = read_effects(upper, ws)
    real_move = apply_module._move

    def crashing_move(src: str, dst: str) -> None:
        raise OSError("power lost")

    monkeypatch.setattr(apply_module, "_move", crashing_move)
    with pytest.raises(OSError, match="power lost"):
        apply_effects(effects, overlay.layers / layer, upper, ws)
    monkeypatch.setattr(apply_module, "_move", real_move)
    outside = tmp_path / "outside"
    outside.mkdir()
    _swap_for_link(ws / "out", outside)
    assert recover(overlay.layers) == [overlay.layers / layer]
    assert list(outside.iterdir()) == []
    assert (ws / "a" / "one").read_text() == "1\n"


def test_applying_a_held_layer_skips_what_is_a_conflict(overlay: Overlay) -> None:
    """A folder the workspace lost while the command ran comes back in the layer as a new
    folder with whiteouts (a conflict): the operator's apply applies the rest, never it."""
    ws = overlay.workspace
    (ws / "d").mkdir()
    (ws / "d" / "x").write_text("x\n")
    (ws / "d" / "y").write_text("y\n")
    (ws / "notes.txt").write_text("work\n")
    layer, _ = overlay.run("rm d/x; rm notes.txt")
    (ws / "d" / "x").unlink()
    (ws / "d" / "y").unlink()
    (ws / "d").rmdir()  # gone from the workspace meanwhile

    reviewer = Reviewer(overlay.layers)
    result = reviewer.review(layer, str(ws), protected=lambda _p: False)
    assert {h.reason for h in result.held} >= {"conflict"}
    reviewer.resolve(layer, apply=True)
    assert not (ws / "d").exists()
    assert not (ws / "notes.txt").exists()


def _policy_review(overlay: Overlay, tmp_path: Path, script: str):  # type: ignore[no-untyped-def]
    from guard._policy import Policy

    policy = Policy.load(tmp_path / "guard-home", overlay.workspace)
    ws = overlay.workspace
    return review(
        overlay,
        script,
        protected=lambda p: policy.protects_write(p, ws),
        blocked=lambda p: policy.protects_write(p, ws, blocked_only=True),
    )


@pytest.mark.parametrize(
    "script",
    [
        # pip vendors a CA bundle; a package ships test keys: nothing was there to lose
        "mkdir -p .venv/lib/site-packages/pip/_vendor/certifi && "
        "echo cert > .venv/lib/site-packages/pip/_vendor/certifi/cacert.pem",
        "mkdir -p node_modules/tls-fixtures/keys && echo key > node_modules/tls-fixtures/keys/server.key",
    ],
    ids=["venv-ca-bundle", "npm-package-keys"],
)
def test_a_new_regenerable_folder_with_key_files_is_applied(
    overlay: Overlay, tmp_path: Path, script: str
) -> None:
    make_repo(overlay.workspace)
    _, _, result = _policy_review(overlay, tmp_path, script)
    assert result.decision == "applied", result
    assert any(p.suffix in (".pem", ".key") for p in overlay.workspace.rglob("*"))


@pytest.mark.parametrize(
    "script",
    [
        # what is blocked stays held inside a new regenerable folder too
        "mkdir -p node_modules/x/.git/hooks && echo evil > node_modules/x/.git/hooks/pre-commit",
        # a key file in a new folder that is not regenerable is the project's: held
        "mkdir -p certs && echo key > certs/server.key",
        # an existing regenerable folder: a key file added to it is held as before
        "echo key > node_modules/server.key",
    ],
    ids=["blocked-inside", "not-regenerable", "existing-folder"],
)
def test_what_a_regenerable_folder_cannot_excuse_is_still_held(
    overlay: Overlay, tmp_path: Path, script: str
) -> None:
    make_repo(overlay.workspace)
    (overlay.workspace / "node_modules").mkdir(exist_ok=True)
    _, _, result = _policy_review(overlay, tmp_path, script)
    assert result.decision == "held", result


def test_a_held_creation_is_called_one_and_counted_truly(overlay: Overlay, tmp_path: Path) -> None:
    """A new folder of key files is held as a creation, with every file and byte counted (it
    was titled "delete or overwrite work" and counted "1 files, 0 B")."""
    from guard._effects import summary_line
    from guard._sidecar.text import effects_dialog

    make_repo(overlay.workspace)
    script = "mkdir certs && for i in $(seq 300); do echo key > certs/k$i.key; done"
    _, _, result = _policy_review(overlay, tmp_path, script)
    assert result.decision == "held", result
    (hold,) = result.held
    assert (hold.effect.kind, hold.files, hold.bytes) == ("created", 300, 1200)
    assert summary_line(result.held) == "1 creation (300 files, 1.2 KiB)"
    dialog = effects_dialog(result.held, script, "")
    assert "delete or overwrite" not in dialog.title
    assert dialog.title.startswith("operator-guard: the agent's command ")
    assert "300 files" in dialog.message


def test_a_held_deletion_is_still_titled_a_loss_of_work(overlay: Overlay) -> None:
    from guard._effects import summary_line
    from guard._sidecar.text import effects_dialog

    make_repo(overlay.workspace)
    _, _, result = review(overlay, "rm notes.md")
    assert summary_line(result.held) == "1 deletion (1 file, 15 B)"
    assert effects_dialog(result.held, "rm notes.md", "").title.endswith(
        "wants to delete or overwrite work"
    )
