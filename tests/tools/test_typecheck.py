"""``make lint``'s TypeScript check runs tsc again exactly when an input changed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tools.pi.harness import PinnedPi
from tools.pi.typecheck import VERIFIER_TSCONFIG, check, inputs

# Stands in for tsc: counts its runs in ``runs`` and exits with the code in ``code``.
FAKE_TSC = """
import pathlib, sys
here = pathlib.Path.cwd()
(here / "runs").write_text(str(int((here / "runs").read_text() or 0) + 1))
sys.exit(int((here / "code").read_text()))
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in (
        "guard/_pi/extension/index.ts",
        "guard/_pi/extension/ask.ts",
        "tools/pi/tsconfig.base.json",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("// v1\n")
    for name in ("tsconfig.json", "package.json", "package-lock.json"):
        (tmp_path / "tools/pi/legacy").mkdir(parents=True, exist_ok=True)
        (tmp_path / "tools/pi/legacy" / name).write_text("{}\n")
    (tmp_path / ".cache").mkdir()
    (tmp_path / "runs").write_text("0")
    (tmp_path / "code").write_text("0")
    return tmp_path


def pinned(root: Path) -> PinnedPi:
    return PinnedPi("legacy", "pi", "1.0.0", root, root / "cli.js", Path(sys.executable), "v0")


def command() -> list[str]:
    return [sys.executable, "-c", FAKE_TSC, "-p", "tools/pi/legacy/tsconfig.json"]


def runs(root: Path) -> int:
    return int((root / "runs").read_text())


def test_a_pass_is_not_repeated_until_an_input_changes(clone: Path) -> None:
    pi = pinned(clone)
    assert check(clone, command(), pi, "shim-legacy") == 0
    assert check(clone, command(), pi, "shim-legacy") == 0
    assert runs(clone) == 1
    for changed in inputs(clone, Path("tools/pi/legacy/tsconfig.json"), pi):
        changed.write_text(changed.read_text() + " ")
        assert check(clone, command(), pi, "shim-legacy") == 0
    # the tsconfig, the shim's two modules, the base config, package, lockfile
    assert runs(clone) == 1 + 6


def test_a_failure_is_run_again_and_clears_an_earlier_pass(clone: Path) -> None:
    pi = pinned(clone)
    assert check(clone, command(), pi, "shim-legacy") == 0
    (clone / "guard/_pi/extension/index.ts").write_text("// broken\n")
    (clone / "code").write_text("2")
    assert check(clone, command(), pi, "shim-legacy") == 2
    assert check(clone, command(), pi, "shim-legacy") == 2
    assert runs(clone) == 3
    assert not (clone / ".cache/typecheck-shim-legacy.ok").exists()


def test_the_verifier_check_reads_every_source(clone: Path) -> None:
    (clone / "verifier/src").mkdir(parents=True)
    (clone / "verifier/src/a.ts").write_text("")
    (clone / "verifier/test").mkdir()
    (clone / "verifier/test/b.ts").write_text("")
    read = inputs(clone, VERIFIER_TSCONFIG, pinned(clone))
    assert clone / "verifier/src/a.ts" in read
    assert clone / "verifier/test/b.ts" in read
