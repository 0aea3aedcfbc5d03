"""The wheel built from this checkout ships the three packages and nothing else.

``tools/`` (the real-pi harness, the scripted model, the schema generator), ``tests/`` and
``bench/`` are repo-only; the pi extension shim and the built-in policy are package data the
installed guard cannot work without. The wheel is built offline with the hatchling installed
in the virtualenv (the ``test`` dependency group), as ``pip wheel --no-build-isolation`` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("audit", "guard", "planning")
PACKAGE_DATA = (
    "guard/_pi/extension/index.ts",
    "guard/_pi/extension/ask.ts",
    "guard/_pi/extension/local.ts",
    "guard/_pi/extension/sidecar.ts",
    "guard/_pi/extension/wire.ts",
    "guard/_policy/_builtin.toml",
    "guard/_approvals/page/index.html",
    "guard/_approvals/page/app.js",
    "guard/_approvals/page/app.css",
    "guard/_approvals/page/enrol.html",
    "guard/_approvals/page/enrol.js",
)
REPO_ONLY = ("tools", "tests", "bench", "docs", "examples", "verifier")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(out),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    built = sorted(out.glob("*.whl"))
    assert len(built) == 1, built
    with zipfile.ZipFile(built[0]) as archive:
        yield archive


def _names(wheel: zipfile.ZipFile) -> list[PurePosixPath]:
    return [PurePosixPath(name) for name in wheel.namelist() if not name.endswith("/")]


def _dist_info(wheel: zipfile.ZipFile) -> str:
    infos = {p.parts[0] for p in _names(wheel) if p.parts[0].endswith(".dist-info")}
    assert len(infos) == 1, infos
    return infos.pop()


def test_wheel_holds_only_the_three_packages_and_the_dist_info(wheel: zipfile.ZipFile) -> None:
    tops = {p.parts[0] for p in _names(wheel)}
    dist_info = _dist_info(wheel)
    assert dist_info.startswith("pi_operator_guard-")
    assert tops == {*PACKAGES, dist_info}


def test_wheel_holds_nothing_repo_only(wheel: zipfile.ZipFile) -> None:
    for path in _names(wheel):
        assert path.parts[0] not in REPO_ONLY, path
        assert "__pycache__" not in path.parts, path
        assert path.suffix != ".pyc", path


@pytest.mark.parametrize("data", PACKAGE_DATA)
def test_wheel_includes_the_package_data(wheel: zipfile.ZipFile, data: str) -> None:
    assert PurePosixPath(data) in _names(wheel)
    assert wheel.read(data) == (ROOT / data).read_bytes()


def test_wheel_holds_every_source_file_of_the_packages(wheel: zipfile.ZipFile) -> None:
    in_wheel = {p for p in _names(wheel) if p.parts[0] in PACKAGES}
    in_checkout = {
        PurePosixPath(path.relative_to(ROOT).as_posix())
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert in_wheel == in_checkout


def test_wheel_declares_the_cli_entry_point(wheel: zipfile.ZipFile) -> None:
    entry_points = wheel.read(f"{_dist_info(wheel)}/entry_points.txt").decode()
    assert "pi-guard = guard._cli:run" in entry_points
