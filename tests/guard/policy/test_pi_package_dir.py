"""``$PI_PACKAGE_DIR`` (where pi runs from when it is set) is among what runs outside the
sandbox: pi's file tools never write it, whatever else names pi's installation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.policy.conftest import World


@pytest.mark.parametrize(
    ("tool", "relative"),
    [("write", "dist/index.js"), ("edit", "package.json"), ("write", "node_modules/x/i.js")],
)
def test_pi_package_dir_is_never_written(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tool: str, relative: str
) -> None:
    package = tmp_path / "opt-pi"  # not on PATH, not the parent process: only the variable
    (package / "dist").mkdir(parents=True)
    monkeypatch.setenv("PI_PACKAGE_DIR", str(package))
    args = {"path": str(package / relative), "content": "x", "oldText": "a", "newText": "b"}
    verdict = world.policy().classify(tool, args, world.project)
    assert verdict.verdict == "block"
    assert "builtin.runs-outside-sandbox" in verdict.rule_ids
    shell = world.policy().classify("bash", {"command": f"echo x > {package}/dist/cli.js"}, world.project)  # fmt: skip
    assert shell.verdict == "block"
    monkeypatch.delenv("PI_PACKAGE_DIR")
    assert world.policy().classify(tool, args, world.project).verdict != "block"
