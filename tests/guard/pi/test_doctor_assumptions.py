"""``pi-guard doctor`` checks what it assumes and what pi will read: Node against the pi it
assumes when it finds none, the user's policy file, and the package entries of pi's
``settings.json`` whose folder is gone; ``install --package D --uninstall`` warns while pi's
settings still list D."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from guard._cli import main
from guard._pi.install import install
from guard._pi.probe import NEWEST_TESTED_NODE
from tests.cli_runner import invoke

REPO = Path(__file__).resolve().parents[3]


def only_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """PATH holds a fake ``node`` of ``version`` and nothing else (no pi, no npm)."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    node = folder / "node"
    node.write_text(f"#!/bin/sh\necho v{version}\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def doctor(directory: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["doctor", str(directory), "--json"])
    return code, json.loads(capsys.readouterr().out)


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [c for c in report["checks"] if c["name"] == name]
    return found


def test_the_assumed_node_is_the_pinned_pis() -> None:
    lock = json.loads((REPO / "tools/pi/current/package-lock.json").read_text())
    package = lock["packages"]["node_modules/@earendil-works/pi-coding-agent"]
    assert package["engines"]["node"] == NEWEST_TESTED_NODE


@pytest.mark.parametrize(("version", "reason"), [("20.11.0", "node-too-old-for-current-pi"),
                                                 ("22.19.0", "node-ok")])  # fmt: skip
def test_node_is_checked_against_the_pi_it_assumes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent_dir: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    version: str,
    reason: str,
) -> None:
    only_node(tmp_path, monkeypatch, version)
    _, report = doctor(project, capsys)
    assert check(report, "pi")["reason"] == "pi-not-found"  # "the checks below assume ..."
    node = check(report, "node")
    assert node["reason"] == reason
    if reason != "node-ok":  # Node 20 is not fine for pi 1.6.0
        assert node["status"] == "warn"
        assert f"needs node {NEWEST_TESTED_NODE}; node {version}" in node["detail"]


def test_the_user_policy_is_checked(
    agent_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = agent_dir / "operator-guard"
    Guard.open(home).close()
    _, report = doctor(project, capsys)
    assert check(report, "policy")["reason"] == "no-user-policy"
    (home / "operator-guard.toml").write_text('[sandbox]\nmode = "sometimes"\n[grants]\nx = 1\n')
    _, report = doctor(project, capsys)
    policy = check(report, "policy")
    assert (policy["status"], policy["reason"]) == ("warn", "policy-problems")
    assert policy["detail"].startswith("3 problems: ") and "mode" in policy["detail"]
    assert policy["fix"] == f"pi-guard policy check {home / 'operator-guard.toml'}"
    main(["doctor", str(project)])
    assert "  WARN  policy   3 problems: " in capsys.readouterr().out


@pytest.mark.parametrize(
    "text",
    [
        '[sandbox]\nnetwork = "off"\nhidden = ["~/secret"]\n[rules\nx = \n',  # bad TOML below
        "\x00\xff not toml at all",
        '[sandbox]\nnetwork = "off"\n\n[[rule]]\nid = "x"\nverdict = "allow\n',
    ],
)
def test_a_user_policy_that_does_not_parse_fails_doctor(
    agent_dir: Path, project: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    """The operator's settings do not apply (only the strictest reading does): doctor names
    the file and exits non-zero, never "ok" or a mere warning."""
    home = agent_dir / "operator-guard"
    Guard.open(home).close()
    (home / "operator-guard.toml").write_bytes(text.encode("utf-8", "surrogateescape"))
    _, report = doctor(project, capsys)
    policy = check(report, "policy")
    assert (policy["status"], policy["reason"]) == ("fail", "policy-unreadable")
    assert "not valid TOML" in policy["detail"] or "cannot read" in policy["detail"]
    assert main(["doctor", str(project)]) != 0
    assert "  FAIL  policy   " in capsys.readouterr().out


def test_a_package_whose_folder_was_uninstalled_is_named(
    tmp_path: Path, agent_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "guard-package"
    install("package", package, force=False, uninstall=False)
    agent_dir.mkdir(parents=True, exist_ok=True)
    settings = agent_dir / "settings.json"
    settings.write_text(json.dumps({"packages": [str(package), "npm:some-other-package"]}))
    _, report = doctor(project, capsys)
    assert check(report, "packages")["reason"] == "packages-present"

    # Removed as the guard's own install step said, but pi was never told: still listed.
    done = invoke("install", "--package", str(package), "--uninstall")
    assert done.returncode == 0
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("pi-guard: warning:")]
    assert warnings == [
        f"pi-guard: warning: {settings} still lists {package}, whose folder this removed: pi"
        f" cannot load it; run pi remove {package}"
    ]
    _, report = doctor(project, capsys)
    packages = check(report, "packages")
    assert (packages["status"], packages["reason"]) == ("warn", "package-folder-missing")
    assert f"{package} (in {settings})" in packages["detail"]
    assert packages["fix"] == f"pi remove {package}"

    settings.write_text(json.dumps({"packages": ["npm:some-other-package"]}))  # pi remove
    _, report = doctor(project, capsys)
    assert check(report, "packages")["reason"] == "packages-present"
    install("package", package, force=False, uninstall=False)
    done = invoke("install", "--package", str(package), "--uninstall")
    assert "warning" not in done.stderr  # nothing lists it: nothing to warn about
