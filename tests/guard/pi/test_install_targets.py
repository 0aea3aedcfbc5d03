"""``pi-guard install``: the personal default, the pi package, second copies, trust notes,
and uninstall leaving no empty directories behind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from guard._cli import main
from guard._pi.install import MANIFEST_FILE, install, package_json, shim_source
from guard._pi.layout import PACKAGE_NAME, SHIM_MODULES, find_installs


def test_install_without_a_flag_goes_to_the_personal_extensions(
    agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = agent_dir / "extensions" / "operator-guard"
    assert result["target"] == "global"
    assert result["directory"] == str(expected)
    assert (expected / "index.ts").read_bytes() == shim_source()
    assert result["notes"] == []  # a personal extension loads whatever the trust
    assert result["warnings"] == []


def test_project_install_says_plainly_that_the_folder_must_be_trusted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert "trusted" in out
    assert "--approve" in out
    assert "skip the guard without a word" in out
    assert "Now: ask" in out
    assert f"pi-guard doctor {project}" in out


def test_project_flag_without_a_value_means_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--project", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["directory"] == str(Path.cwd() / ".pi" / "extensions" / "operator-guard")


def test_package_is_a_pi_package_folder(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    result = install("package", folder, force=False, uninstall=False)
    assert result.action == "installed"
    manifest = json.loads((folder / "package.json").read_text())
    assert manifest["name"] == PACKAGE_NAME
    assert "pi-package" in manifest["keywords"]
    assert manifest["pi"] == {"extensions": ["./index.ts"]}
    assert manifest["peerDependencies"]
    assert set(manifest["peerDependencies"].values()) == {"*"}
    assert (folder / "index.ts").read_bytes() == shim_source()
    assert json.loads((folder / "guard.json").read_text())["python"] == str(
        Path(sys.executable).absolute()
    )
    assert set(json.loads((folder / MANIFEST_FILE).read_text())["files"]) == {
        "index.ts",
        *SHIM_MODULES,
        "guard.json",
        "tools.json",
        "package.json",
    }
    text = result.render()
    assert f"pi install {folder}" in text
    assert f"pi remove {folder}" in text
    assert install("package", folder, force=False, uninstall=False).action == "unchanged"


def test_package_json_lists_each_imported_pi_package_as_a_star_peer() -> None:
    shim = (
        b'import type { A } from "@earendil-works/pi-coding-agent";\nimport { x } from "node:fs";\n'
    )
    assert package_json(shim)["peerDependencies"] == {"@earendil-works/pi-coding-agent": "*"}


def test_package_uninstall_removes_the_folder_it_created(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "pkg"
    install("package", folder, force=False, uninstall=False)
    result = install("package", folder, force=False, uninstall=True)
    assert set(result.files) == {
        "index.ts",
        *SHIM_MODULES,
        "guard.json",
        "tools.json",
        "package.json",
        MANIFEST_FILE,
    }
    assert result.removed_dirs == (str(tmp_path / "deep"),)
    assert not (tmp_path / "deep").exists()


def test_a_second_copy_is_warned_about(
    project: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    assert main(["install", "--project", str(project), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    (warning,) = result["warnings"]
    assert "second copy" in warning
    assert str(agent_dir / "extensions" / "operator-guard") in warning
    assert "second copy" in captured.err
    assert [o["kind"] for o in result["otherInstalls"]] == ["global"]


def test_a_package_listed_in_settings_counts_as_a_copy(tmp_path: Path, agent_dir: Path) -> None:
    folder = tmp_path / "pkg"
    install("package", folder, force=False, uninstall=False)
    agent_dir.mkdir(parents=True, exist_ok=True)
    # pi install stores a path relative to the settings file.
    (agent_dir / "settings.json").write_text(json.dumps({"packages": ["../pkg"]}))
    (found,) = find_installs(None, agent_dir)
    assert (found.kind, found.scope, found.directory) == ("package", "personal", str(folder))
    result = install("global", None, force=False, uninstall=False)
    (warning,) = result.warnings
    assert "package" in warning
    assert str(agent_dir / "settings.json") in warning


def test_no_warning_when_the_only_copy_is_reinstalled(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    assert install("project", project, force=False, uninstall=False).warnings == ()


def test_uninstall_removes_the_pi_directories_it_created(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    result = install("project", project, force=False, uninstall=True)
    # An empty .pi/extensions alone re-triggers pi's trust prompt: nothing may be left.
    assert result.removed_dirs == (str(project / ".pi" / "extensions"), str(project / ".pi"))
    assert list(project.iterdir()) == []


def test_uninstall_keeps_directories_it_did_not_create_or_that_hold_other_things(
    project: Path,
) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "operator-guard.toml").write_text("version = 1\n")
    install("project", project, force=False, uninstall=False)
    install("project", project, force=False, uninstall=False)  # a reinstall keeps the record
    result = install("project", project, force=False, uninstall=True)
    assert result.removed_dirs == (str(project / ".pi" / "extensions"),)
    assert sorted(p.name for p in (project / ".pi").iterdir()) == ["operator-guard.toml"]

    (project / ".pi" / "extensions" / "mine").mkdir(parents=True)
    install("project", project, force=False, uninstall=False)
    assert install("project", project, force=False, uninstall=True).removed_dirs == ()
    assert (project / ".pi" / "extensions" / "mine").is_dir()
