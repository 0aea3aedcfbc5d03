"""A command's layer is mounted with one mount table: every overlay is there (the workspace's
and each package cache's) whatever the paths' blanks, and a table that mounted nothing runs
nothing. Real unshare, mount and bwrap."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from guard._effects import Reviewer
from guard._hermetic import minimal_env, system_program
from guard._sandbox import SpawnContext, plan, spawn
from guard._sandbox.argv import OVERLAY_SCRIPT, layer_tail
from guard._sandbox.model import LAYER_ENV
from tests.guard.effects.conftest import snapshot

pytestmark = pytest.mark.usefixtures("bwrap_required")


@pytest.mark.parametrize("root_name", ["plain", "with blanks", "tab\there"])
def test_every_overlay_of_a_layer_is_mounted_whatever_the_paths(
    tmp_path: Path, root_name: str
) -> None:
    root = tmp_path / root_name
    user, ws, home = root / "the user", root / "my project", root / "guard home"
    for d in (user / ".npm", user / ".cache" / "pip", ws):
        d.mkdir(parents=True)
    (user / ".npm" / "operators-own").write_text("mine\n")
    (ws / "draft.md").write_text("the operator's words\n")
    home.mkdir(mode=0o700)
    layers = home / "sessions" / "s1" / "layers"
    env = {**os.environ, "HOME": str(user)}
    env.pop("npm_config_cache", None)
    env.pop("PIP_CACHE_DIR", None)
    planned = plan(ws, home, env=env, layers=str(layers))
    assert planned.effects == "review", planned.notes
    assert len(planned.cache_stores) >= 2  # npm's and pip's at least
    user_before, ws_before = snapshot(user), snapshot(ws)

    layer = uuid.uuid4().hex
    command = (
        "echo new > made.txt && rm draft.md && echo cached > ~/.npm/fetched "
        "&& echo wheel > ~/.cache/pip/built && cat ~/.npm/operators-own"
    )
    wrapped = spawn(
        planned, SpawnContext(command=command, cwd=str(ws), env={**env, LAYER_ENV: layer})
    )
    done = subprocess.run(
        ["/bin/bash", "-c", wrapped.command],
        cwd=ws,
        env=wrapped.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "mine\n"  # the user's cache is the lower of its overlay
    # Nothing reached the workspace or the user's caches: all of it is in the layer.
    assert snapshot(user) == user_before
    assert snapshot(ws) == ws_before
    assert (layers / layer / "upper" / "made.txt").read_text() == "new\n"
    uppers = [p.name for p in (layers / layer).glob("c*/upper/*")]
    assert sorted(uppers) == ["built", "fetched"]
    review = Reviewer(layers).review(
        layer,
        str(ws),
        protected=lambda _p: False,
        mount_points=planned.mount_points,
        caches=planned.cache_stores,
    )
    assert review.decision == "held"  # the deletion of the operator's draft
    assert any(h.effect.path.endswith("draft.md") for h in review.held)


def test_a_table_that_mounted_nothing_runs_nothing(tmp_path: Path) -> None:
    """A mount program that mounts nothing (or an entry mount -a skipped) leaves the workspace
    bare: the command must not run then, since its writes would reach the workspace unseen."""
    ws, layers = tmp_path / "ws", tmp_path / "layers"
    ws.mkdir()
    layers.mkdir(mode=0o700)
    layer = uuid.uuid4().hex
    argv = [
        system_program("unshare"), "--user", "--map-root-user", "--mount",
        "--propagation", "private", "--", "/bin/sh", "-c", OVERLAY_SCRIPT, "sh",
        str(layers), str(ws), layer, *layer_tail("/bin/true", str(ws)),
        "/bin/sh", "-c", 'echo ran > "$0/ran"', str(ws),
    ]  # fmt: skip
    done = subprocess.run(
        argv, env=minimal_env(), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 125
    assert "was not mounted; nothing was run" in done.stderr
    assert not (ws / "ran").exists()


def test_a_layer_id_that_is_not_ours_runs_nothing(tmp_path: Path) -> None:
    ws, layers = tmp_path / "ws", tmp_path / "layers"
    ws.mkdir()
    layers.mkdir(mode=0o700)
    for bad in ("", "../escape", "a b", "x/y", "$(id)"):
        argv = [
            system_program("unshare"), "--user", "--map-root-user", "--mount",
            "--propagation", "private", "--", "/bin/sh", "-c", OVERLAY_SCRIPT, "sh",
            str(layers), str(ws), bad, *layer_tail(system_program("mount"), str(ws)),
            "/bin/sh", "-c", 'echo ran > "$0/ran"', str(ws),
        ]  # fmt: skip
        done = subprocess.run(
            argv, env=minimal_env(), capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 125, bad
        assert not (ws / "ran").exists()
        assert list(layers.iterdir()) == []
