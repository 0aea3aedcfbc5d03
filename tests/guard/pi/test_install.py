"""``pi-guard install``: where the shim goes, idempotence, and never clobbering edits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from guard._cli.exits import ExitCode, exit_for
from guard._errors import BadInputError, InstallTargetError, ModifiedInstallError
from guard._pi.install import (
    CONFIG_FILE,
    CORRUPT_SUFFIX,
    MANIFEST_FILE,
    TOOLS_FILE,
    extension_dir,
    install,
    shim_source,
    shim_sources,
)
from guard._pi.layout import SHIM_MODULES
from guard._policy import PLANNER_TOOL_NAME

pytestmark = pytest.mark.integration


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


SHIM_FILES = {"index.ts", *SHIM_MODULES}


def shim_dir(project: Path) -> Path:
    return project / ".pi" / "extensions" / "operator-guard"


def test_installed_tools_are_what_the_sidecar_describes(project: Path, tmp_path: Path) -> None:
    """The shim registers ``tools.json`` without asking the sidecar: it must be what a
    sidecar of this package lists (a real one, over its stdio), under the name the shim reads."""
    install("project", project, force=False, uninstall=False)
    installed = json.loads((shim_dir(project) / TOOLS_FILE).read_text())
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "describe", "params": {}})
    done = subprocess.run(
        [sys.executable, "-I", "-m", "guard", "serve"],
        input=request + "\n",
        capture_output=True,
        text=True,
        env={**os.environ, "PI_OPERATOR_GUARD_HOME": str(tmp_path / "home")},
        timeout=120,
        check=False,
    )
    described = json.loads(done.stdout.splitlines()[0])["result"]["tools"]
    assert installed == described
    assert [tool["name"] for tool in installed] == [PLANNER_TOOL_NAME]
    assert f'readFileSync(join(HERE, "{TOOLS_FILE}")' in shim_source().decode()


def test_project_install_writes_shim_config_and_manifest(project: Path) -> None:
    result = install("project", project, force=False, uninstall=False)
    target = shim_dir(project)
    assert result.action == "installed"
    assert result.directory == str(target)
    assert (target / "index.ts").read_bytes() == shim_source()
    for name, source in shim_sources().items():  # the modules index.ts imports, beside it
        assert (target / name).read_bytes() == source
    config = json.loads((target / CONFIG_FILE).read_text())
    assert config["python"] == str(Path(sys.executable).absolute())
    assert config["args"] == ["-I", "-m", "guard._warm", "serve"]
    assert config["home"] is None
    assert config["confirmTimeoutMs"] == 60_000
    manifest = json.loads((target / MANIFEST_FILE).read_text())
    assert set(manifest["files"]) == {*SHIM_FILES, CONFIG_FILE, TOOLS_FILE}
    text = result.render()
    assert str(target) in text
    assert "/guard" in text
    assert "--uninstall" in text


def test_shim_is_small_and_imports_only_types_from_pi_but_its_own_tools() -> None:
    sources = {name: text.decode() for name, text in shim_sources().items()}
    assert set(sources) == SHIM_FILES
    # the spool (nothing lost), the judged file opens, the effects review's exec, the
    # compact dialog's choices and Details, stop, and the one ask (every decision stays in
    # Python): all its modules together
    assert sum(source.count("\n") for source in sources.values()) < 960
    imports = {
        name: re.findall(
            r'^import [^;]*? from "@mariozechner/pi-coding-agent"', source, flags=re.M | re.S
        )
        for name, source in sources.items()
    }
    values = [b for found in imports.values() for b in found if not b.startswith("import type ")]
    # The value imports: pi's own bash (with the sandbox's spawn hook and exec, which reviews
    # each command's effects) and file tools (which open only the file the guard judged).
    assert [" ".join(v.split()) for v in values] == [
        "import { createBashToolDefinition, createEditToolDefinition, createLocalBashOperations,"
        " createReadToolDefinition, createWriteToolDefinition, } from"
        ' "@mariozechner/pi-coding-agent"'
    ]
    assert len(imports["index.ts"]) == 2
    assert sum(source.count("export default function") for source in sources.values()) == 1
    assert sources["index.ts"].count("export default function") == 1
    # The modules import each other only by a relative ./NAME.ts, never from elsewhere.
    for source in sources.values():
        local = re.findall(r'^import [^;]*? from "(\.[^"]*)"', source, flags=re.M | re.S)
        assert {f"{name[2:]}" for name in local} <= set(SHIM_MODULES)


def test_an_install_of_one_file_is_updated_with_the_modules_and_an_edited_module_is_kept(
    project: Path,
) -> None:
    """An install from before the shim had modules (index.ts alone) updates in place; a
    module someone edited is neither overwritten nor removed without ``--force``."""
    install("project", project, force=False, uninstall=False)
    target = shim_dir(project)
    for name in SHIM_MODULES:
        (target / name).unlink()
    manifest = json.loads((target / MANIFEST_FILE).read_text())
    manifest["files"] = {k: v for k, v in manifest["files"].items() if k not in SHIM_MODULES}
    (target / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert install("project", project, force=False, uninstall=False).action == "updated"
    assert {p.name for p in target.iterdir()} >= SHIM_FILES
    (target / "ask.ts").write_text("// edited\n")
    with pytest.raises(ModifiedInstallError):
        install("project", project, force=False, uninstall=False)
    with pytest.raises(ModifiedInstallError):
        install("project", project, force=False, uninstall=True)
    assert (target / "ask.ts").read_text() == "// edited\n"
    assert install("project", project, force=True, uninstall=False).action == "updated"
    assert (target / "ask.ts").read_bytes() == shim_sources()["ask.ts"]


def test_global_install_follows_pi_coding_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    result = install("global", None, force=False, uninstall=False)
    expected = tmp_path / "agent" / "extensions" / "operator-guard"
    assert result.directory == str(expected)
    assert (expected / "index.ts").is_file()
    assert extension_dir("global", None) == expected


def test_second_install_is_unchanged(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    before = {p.name: p.stat().st_mtime_ns for p in shim_dir(project).iterdir()}
    again = install("project", project, force=False, uninstall=False)
    assert again.action == "unchanged"
    assert {p.name: p.stat().st_mtime_ns for p in shim_dir(project).iterdir()} == before


def test_options_are_written_and_user_settings_survive_a_reinstall(
    project: Path, tmp_path: Path
) -> None:
    install(
        "project",
        project,
        force=False,
        uninstall=False,
        home=tmp_path / "home",
        confirm_timeout_ms=5000,
    )
    config_path = shim_dir(project) / CONFIG_FILE
    config = json.loads(config_path.read_text())
    assert config["home"] == str(tmp_path / "home")
    assert config["confirmTimeoutMs"] == 5000
    config["ttlSeconds"] = 90
    config_path.write_text(json.dumps(config))
    again = install("project", project, force=False, uninstall=False)
    assert again.action == "updated"
    kept = json.loads(config_path.read_text())
    assert kept["ttlSeconds"] == 90
    assert kept["confirmTimeoutMs"] == 5000
    assert kept["home"] == str(tmp_path / "home")


def test_a_modified_shim_is_not_overwritten_without_force(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    shim = shim_dir(project) / "index.ts"
    shim.write_text("// my local patch\n")
    with pytest.raises(ModifiedInstallError) as caught:
        install("project", project, force=False, uninstall=False)
    assert exit_for(caught.value) == (ExitCode.BAD_INPUT, "error")
    assert str(shim) in str(caught.value)
    assert shim.read_text() == "// my local patch\n"
    forced = install("project", project, force=True, uninstall=False)
    assert forced.action == "updated"
    assert shim.read_bytes() == shim_source()


def test_a_foreign_directory_of_the_same_name_is_not_overwritten(project: Path) -> None:
    target = shim_dir(project)
    target.mkdir(parents=True)
    (target / "index.ts").write_text("export default function () {}\n")
    with pytest.raises(ModifiedInstallError):
        install("project", project, force=False, uninstall=False)


def test_a_corrupt_config_is_repaired_by_a_plain_reinstall(project: Path) -> None:
    # The shim's error names `pi-guard install`: that must fix it, keeping the broken copy.
    install("project", project, force=False, uninstall=False)
    config = shim_dir(project) / CONFIG_FILE
    config.write_text("{not json")
    result = install("project", project, force=False, uninstall=False)
    assert result.action == "updated"
    assert result.repaired == CONFIG_FILE + CORRUPT_SUFFIX
    assert json.loads(config.read_text())["python"] == str(Path(sys.executable).absolute())
    assert (shim_dir(project) / (CONFIG_FILE + CORRUPT_SUFFIX)).read_text() == "{not json"
    assert "rewritten" in result.render()


def test_a_corrupt_config_in_a_foreign_directory_needs_the_force_the_message_names(
    project: Path,
) -> None:
    target = shim_dir(project)
    target.mkdir(parents=True)
    (target / "index.ts").write_bytes(shim_source())
    (target / CONFIG_FILE).write_text("{not json")  # no manifest: not provably ours
    with pytest.raises(ModifiedInstallError) as caught:
        install("project", project, force=False, uninstall=False)
    message = str(caught.value)
    assert f"pi-guard install --project {project} --force" in message
    assert str(target / CONFIG_FILE) in message
    assert "PosixPath" not in message
    repaired = install("project", project, force=True, uninstall=False)
    assert repaired.repaired == CONFIG_FILE + CORRUPT_SUFFIX
    assert json.loads((target / CONFIG_FILE).read_text())["args"] == [
        "-I",
        "-m",
        "guard._warm",
        "serve",
    ]


def test_uninstall_removes_our_files_and_keeps_foreign_ones(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    (shim_dir(project) / "notes.txt").write_text("mine")
    result = install("project", project, force=False, uninstall=True)
    assert result.action == "uninstalled"
    assert set(result.files) == {*SHIM_FILES, CONFIG_FILE, TOOLS_FILE, MANIFEST_FILE}
    assert result.left_in_place == ("notes.txt",)
    assert sorted(p.name for p in shim_dir(project).iterdir()) == ["notes.txt"]


def test_uninstall_of_a_clean_install_removes_the_directory(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    assert install("project", project, force=False, uninstall=True).action == "uninstalled"
    assert not shim_dir(project).exists()
    assert install("project", project, force=False, uninstall=True).action == "not-installed"


def test_uninstall_refuses_a_modified_shim_without_force(project: Path) -> None:
    install("project", project, force=False, uninstall=False)
    (shim_dir(project) / "index.ts").write_text("// edited")
    with pytest.raises(ModifiedInstallError):
        install("project", project, force=False, uninstall=True)
    assert install("project", project, force=True, uninstall=True).action == "uninstalled"


def test_a_missing_project_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstallTargetError) as caught:
        install("project", tmp_path / "nope", force=False, uninstall=False)
    assert "does not exist" in str(caught.value)
    assert str(tmp_path / "nope") in str(caught.value)
    assert "PosixPath" not in str(caught.value)


def test_an_unwritable_target_is_an_install_error_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InstallTargetError) as caught:
        install("package", blocker / "pkg", force=False, uninstall=False)
    assert str(blocker / "pkg") in str(caught.value)
    assert "PosixPath" not in str(caught.value)
    assert exit_for(caught.value) == (ExitCode.BAD_INPUT, "error")


def test_an_out_of_range_timeout_is_bad_input(project: Path) -> None:
    with pytest.raises(BadInputError) as caught:
        install("project", project, force=False, uninstall=False, confirm_timeout_ms=5)
    assert "confirm_timeout_ms" in str(caught.value)
    assert not shim_dir(project).exists()


def test_the_installed_sidecar_command_ignores_a_guard_planted_in_the_workspace(
    project: Path,
) -> None:
    # pi starts the sidecar with the workspace as its working directory; a hostile agent
    # can write `guard/__init__.py` there. Isolated mode (-I) must import the real guard.
    install("project", project, force=False, uninstall=False)
    config = json.loads((shim_dir(project) / CONFIG_FILE).read_text())
    planted = project / "guard"
    planted.mkdir()
    (planted / "__init__.py").write_text("raise SystemExit('planted guard imported')\n")
    (planted / "__main__.py").write_text("raise SystemExit('planted guard imported')\n")
    done = subprocess.run(
        [config["python"], *config["args"]],
        input=b'{"jsonrpc":"2.0","id":1,"method":"health"}\n',
        cwd=project,
        capture_output=True,
        env={**os.environ, "PI_OPERATOR_GUARD_HOME": str(project.parent / "home")},
        timeout=60,
        check=False,
    )
    assert b"planted" not in done.stderr + done.stdout
    assert done.stdout.startswith(b'{"jsonrpc":"2.0","id":1,"result"')
