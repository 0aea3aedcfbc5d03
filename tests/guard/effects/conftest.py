"""A real overlay over a directory, as the sandbox mounts it for every agent command."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from guard._hermetic import minimal_env, system_program
from guard._sandbox.argv import OVERLAY_SCRIPT, layer_tail


@dataclass
class Overlay:
    """Run shell text in ``workspace`` seen through a fresh layer in ``layers``."""

    layers: Path
    workspace: Path

    def run(self, script: str) -> tuple[str, Path]:
        """Run ``script`` (cwd: the overlay of the workspace); returns the layer id and its
        upper directory. The workspace itself is untouched."""
        layer = uuid.uuid4().hex
        argv = [
            system_program("unshare"), "--user", "--map-root-user", "--mount",
            "--propagation", "private", "--", "/bin/sh", "-c", OVERLAY_SCRIPT, "sh",
            str(self.layers), str(self.workspace), layer,
            *layer_tail(system_program("mount"), str(self.workspace)),
            "/bin/sh", "-c", f'cd "$0" && {{ {script}\n}}', str(self.workspace),
        ]  # fmt: skip
        done = subprocess.run(
            argv, env=minimal_env(), capture_output=True, text=True, timeout=60, check=False
        )
        upper = self.layers / layer / "upper"
        assert upper.is_dir() and "overlay" not in done.stderr, done.stderr  # it was mounted
        return layer, upper


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True)


def snapshot(root: Path) -> dict[str, tuple[str, object]]:
    """Every path under ``root``: what it is, its content or target, its mode."""
    out: dict[str, tuple[str, object]] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", path.stat().st_mode & 0o777)
            else:
                out[rel] = ("file", (path.read_bytes(), path.stat().st_mode & 0o777))
    return out


@pytest.fixture
def overlay(tmp_path: Path) -> Overlay:
    layers = tmp_path / "layers"
    layers.mkdir(mode=0o700)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return Overlay(layers, workspace)
