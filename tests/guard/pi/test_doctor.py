"""``pi-guard doctor``: each check fails when it should, and only then; nothing is created."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from guard._cli import main
from guard._pi.install import install
from guard._pi.probe import node_satisfies

pytestmark = pytest.mark.integration

NEW = ("@earendil-works/pi-coding-agent", "0.87.1", ">=22.19.0")
LEGACY = ("@mariozechner/pi-coding-agent", "0.73.1", ">=20.6.0")


def fake_pi(root: Path, package: tuple[str, str, str]) -> Path:
    """A pi package with an executable ``bin/pi`` symlink, the way npm lays it out."""
    name, version, node = package
    folder = root / "node_modules" / name
    (folder / "dist").mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": name, "version": version, "engines": {"node": node}})
    )
    cli = folder / "dist" / "cli.js"
    cli.write_text("#!/usr/bin/env node\n")
    cli.chmod(0o755)
    (root / "bin").mkdir()
    (root / "bin" / "pi").symlink_to(cli)
    return root / "bin" / "pi"


@pytest.fixture
def node_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only a fake ``node`` (v22.19.0) and nothing else."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    node = folder / "node"
    node.write_text("#!/bin/sh\necho v22.19.0\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    return folder


@pytest.fixture
def new_pi(tmp_path: Path, node_bin: Path) -> Path:
    return fake_pi(tmp_path / "pi-new", NEW)


def doctor(
    directory: Path, pi: Path | None, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    argv = ["doctor", str(directory), "--json", *extra]
    if pi is not None:
        argv += ["--pi", str(pi)]
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def checks(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["name"] == name]


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = checks(report, name)
    return found


def failed(report: dict[str, Any]) -> list[str]:
    return [c["reason"] for c in report["checks"] if c["status"] == "fail"]


def ready_home(agent_dir: Path) -> Path:
    """The default home, opened once by the guard: key, keyring, an intact audit log."""
    home = agent_dir / "operator-guard"
    Guard.open(home).close()
    return home


def test_a_global_install_with_a_usable_home_is_ready(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    ready_home(agent_dir)
    code, report = doctor(project, new_pi, capsys)
    assert (code, report["decision"], failed(report)) == (0, "ready", [])
    assert check(report, "pi")["detail"].startswith("@earendil-works/pi-coding-agent 0.87.1")
    assert check(report, "node")["reason"] == "node-ok"
    assert check(report, "installs")["reason"] == "one-install"
    assert check(report, "trust")["reason"] == "no-project-install"
    assert check(report, "python")["reason"] == "imports-guard"
    assert check(report, "key")["reason"] == "key-usable"
    assert check(report, "audit")["reason"] == "audit-intact"
    # The human text says the same.
    assert main(["doctor", str(project), "--pi", str(new_pi)]) == 0
    assert "will load and guard here" in capsys.readouterr().out


def test_no_install_fails_and_creates_nothing(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    assert failed(report) == ["no-install"]
    assert check(report, "installs")["fix"] == "pi-guard install"
    assert check(report, "home")["reason"] == "created-on-first-use"
    # the sandbox is probed from the very first run, before any home exists
    assert check(report, "sandbox")["reason"] == "sandboxed"
    assert not agent_dir.exists()  # no home, no key, not even the agent dir


def test_a_project_install_in_an_undecided_folder_fails(
    project: Path, new_pi: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("project", project, force=False, uninstall=False)
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    assert set(failed(report)) == {"trust-not-decided", "none-loads"}
    trust = check(report, "trust")
    assert "print, JSON and RPC modes skip the guard silently" in trust["detail"]
    assert "--approve" in trust["fix"]
    assert report["trust"]["decision"] == "ask"
    assert report["loading"] == []


def test_trust_follows_the_nearest_saved_decision_and_the_default(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("project", project, force=False, uninstall=False)
    agent_dir.mkdir(parents=True, exist_ok=True)
    real = Path(os.path.realpath(project))
    trust_file = agent_dir / "trust.json"

    trust_file.write_text(json.dumps({str(real.parent): False}))
    code, report = doctor(project, new_pi, capsys)
    assert (code, check(report, "trust")["reason"]) == (8, "untrusted")
    assert report["trust"]["savedEntry"] == str(real.parent)

    trust_file.write_text(json.dumps({str(real.parent): False, str(real): True}))
    code, report = doctor(project, new_pi, capsys)
    assert (code, check(report, "trust")["reason"]) == (0, "trusted")

    trust_file.unlink()
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    code, report = doctor(project, new_pi, capsys)
    assert (code, check(report, "trust")["reason"]) == (0, "trusted")

    (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "never"}))
    assert doctor(project, new_pi, capsys)[0] == 8

    trust_file.write_text("[1, 2]")
    code, report = doctor(project, new_pi, capsys)
    assert check(report, "trust")["reason"] == "trust-store-unreadable"
    assert "PosixPath" not in check(report, "trust")["detail"]


def test_the_legacy_pi_has_no_project_trust(
    project: Path, tmp_path: Path, node_bin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("project", project, force=False, uninstall=False)
    legacy = fake_pi(tmp_path / "pi-old", LEGACY)
    code, report = doctor(project, legacy, capsys)
    assert code == 0, failed(report)
    trust = check(report, "trust")
    assert (trust["status"], trust["reason"]) == ("n/a", "pi-has-no-project-trust")
    assert [i["kind"] for i in report["loading"]] == ["project"]


def test_a_personal_copy_makes_trust_irrelevant_and_two_loading_copies_warn(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("project", project, force=False, uninstall=False)
    install("global", None, force=False, uninstall=False)
    code, report = doctor(project, new_pi, capsys)
    assert code == 0
    assert check(report, "trust")["reason"] == "personal-install-loads"
    assert check(report, "installs")["reason"] == "one-install"  # the project copy is skipped
    agent_dir.joinpath("trust.json").write_text(json.dumps({os.path.realpath(project): True}))
    code, report = doctor(project, new_pi, capsys)
    assert code == 0
    installs = check(report, "installs")
    assert (installs["status"], installs["reason"]) == ("warn", "duplicate-installs")


def test_a_python_that_is_missing_or_cannot_import_the_guard_fails(
    project: Path, new_pi: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False, python=str(tmp_path / "no-python"))
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    assert failed(report) == ["python-not-found"]
    assert check(report, "python")["fix"].startswith("pi-guard install")

    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named guard' >&2\nexit 1\n")
    broken.chmod(0o755)
    install("global", None, force=False, uninstall=False, python=str(broken))
    code, report = doctor(project, new_pi, capsys)
    assert failed(report) == ["guard-not-importable"]
    assert "No module named guard" in check(report, "python")["detail"]


def test_a_corrupt_guard_json_fails_and_the_named_command_repairs_it(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = install("global", None, force=False, uninstall=False)
    (Path(result.directory) / "guard.json").write_text('{"python": 3}')
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    config = check(report, "config")
    assert config["reason"] == "config-invalid"
    assert config["fix"].startswith("pi-guard install ")
    command = config["fix"].split("  ")[0].split()[1:]
    assert main(command) == 0
    capsys.readouterr()
    assert doctor(project, new_pi, capsys)[0] == 0


def test_an_install_missing_a_module_of_the_shim_fails_and_the_fix_restores_it(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi cannot load an index.ts whose module is gone: nothing would guard its sessions."""
    result = install("global", None, force=False, uninstall=False)
    assert check(doctor(project, new_pi, capsys)[1], "shim")["reason"] == "shim-complete"
    (Path(result.directory) / "sidecar.ts").unlink()
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    shim = check(report, "shim")
    assert (shim["reason"], shim["status"]) == ("shim-incomplete", "fail")
    assert "sidecar.ts" in shim["detail"]
    assert main(shim["fix"].split()[1:]) == 0
    capsys.readouterr()
    assert doctor(project, new_pi, capsys)[0] == 0


def test_an_unusable_signing_key_fails(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    home = ready_home(agent_dir)
    key = home / "signing.key"
    key.chmod(0o644)
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    assert failed(report) == ["key-unusable"]
    assert str(key) in check(report, "key")["detail"]
    key.chmod(0o600)
    key.write_text("not a key")
    code, report = doctor(project, new_pi, capsys)
    assert failed(report) == ["key-unusable"]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600  # looked at, never changed


def test_a_tampered_audit_log_fails(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    home = ready_home(agent_dir)
    log = home / "audit.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"seq":0', b'"seq":7', 1))
    code, report = doctor(project, new_pi, capsys)
    assert code == 8
    audit = check(report, "audit")
    assert (audit["status"], audit["reason"]) == ("fail", "audit-tampered")
    assert "pi-guard audit verify" in audit["fix"]


def test_no_pi_is_a_warning_and_an_old_node_a_failure(
    project: Path, tmp_path: Path, node_bin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    code, report = doctor(project, None, capsys)
    assert code == 0
    pi = check(report, "pi")
    assert (pi["status"], pi["reason"]) == ("warn", "pi-not-found")
    needy = fake_pi(tmp_path / "pi-future", ("@earendil-works/pi-coding-agent", "9.0.0", ">=99"))
    code, report = doctor(project, needy, capsys)
    assert code == 8
    assert failed(report) == ["node-too-old"]


def test_a_directory_that_does_not_exist_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "nope") in err
    assert "PosixPath" not in err


@pytest.mark.parametrize(
    ("have", "want", "ok"),
    [
        ("20.20.2", ">=20.6.0", True),
        ("20.20.2", ">=22.19.0", False),
        ("22.19.0", ">=22.19.0", True),
        ("22.19.0", ">=20 <22", False),
        ("22.19.0", "^22", None),
    ],
)
def test_node_ranges(have: str, want: str, ok: bool | None) -> None:
    assert node_satisfies(have, want) is ok


def test_the_report_schema_is_generated() -> None:
    from tools.schemas import generated_schemas

    schema = generated_schemas()["doctor-report.schema.json"]
    assert "checks" in schema["properties"]
    assert sys.version_info >= (3, 11)


def test_the_sandbox_is_checked_for_the_folder(
    project: Path, new_pi: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("global", None, force=False, uninstall=False)
    home = ready_home(agent_dir)
    code, report = doctor(project, new_pi, capsys)
    assert (code, check(report, "sandbox")["reason"]) == (0, "sandboxed")

    (home / "operator-guard.toml").write_text('[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    code, report = doctor(project, new_pi, capsys)
    sandbox = check(report, "sandbox")
    assert (code, sandbox["status"]) == (8, "fail")
    assert "blocked" in sandbox["detail"] and "bubblewrap" in sandbox["fix"]

    (home / "operator-guard.toml").write_text('[sandbox]\nmode = "off"\n')
    code, report = doctor(project, new_pi, capsys)
    sandbox = check(report, "sandbox")
    assert (code, sandbox["status"], sandbox["reason"]) == (0, "warn", "unsandboxed")


def test_doctor_checks_the_log_against_the_latest_anchor(
    project: Path,
    new_pi: Path,
    agent_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from guard._cli import main as cli

    install("global", None, force=False, uninstall=False)
    home = ready_home(agent_dir)
    anchors = tmp_path / "anchors"
    code, report = doctor(project, new_pi, capsys)
    assert "no anchor outside the home" in check(report, "audit")["detail"]
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    assert cli(["--home", str(home), "audit", "anchor"]) == 0
    capsys.readouterr()
    log, head = home / "audit.jsonl", home / "audit.jsonl.head"
    anchored_log, anchored_head = log.read_bytes(), head.read_bytes()
    code, report = doctor(project, new_pi, capsys)
    assert code == 0
    assert "extends the checkpoint of" in check(report, "audit")["detail"]
    # the log and head are rolled back to nothing the anchor knows: doctor fails
    lines = anchored_log.splitlines(keepends=True)
    log.write_bytes(lines[0])
    head.unlink()
    code, report = doctor(project, new_pi, capsys)
    audit = check(report, "audit")
    assert (code, audit["status"]) == (8, "fail")
    log.write_bytes(anchored_log)
    head.write_bytes(anchored_head)
