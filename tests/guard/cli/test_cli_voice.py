"""One CLI voice: every command that reads a guard home says the same line, with exit 2,
when there is none (``audit verify`` said ``keyring: file not found`` with exit 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_runner import invoke


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "verify"],
        ["audit", "show"],
        ["audit", "report"],
        ["audit", "checkpoint"],
        ["grants", "list"],
        ["approvals", "list"],
        ["operator", "list"],
    ],
    ids=" ".join,
)
def test_a_missing_home_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "no-home-here"
    done = invoke(*args, home=missing)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"pi-guard: error: --home: no guard home here (got {missing})"
    ]
    assert done.stdout == ""
    assert not missing.exists()  # nothing was created


def test_an_auditor_with_a_log_and_a_keyring_needs_no_home(tmp_path: Path) -> None:
    """Given explicitly, the log and the keyring are enough (no home is looked for)."""
    done = invoke(
        "audit", "verify", str(tmp_path / "audit.jsonl"), "--keyring", str(tmp_path / "k.json"),
        home=tmp_path / "no-home-here",
    )  # fmt: skip
    assert "no guard home here" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [["ledger", "status"], ["keys", "list"], ["audit", "prove", "0"], ["audit", "recover"]],
    ids=" ".join,
)
def test_the_other_readers_of_a_home_say_the_same(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "no-home-here"
    extra = ["--reason", "r"] if args == ["audit", "recover"] else []
    done = invoke(*args, *extra, home=missing)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("pi-guard: error: --home: no guard home here")
    assert len(done.stderr.splitlines()) == 1
    assert not missing.exists()  # keys list made a home and a key before


def test_policy_check_without_a_file_checks_the_user_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = invoke("policy", "check", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["file"] == str(home / "operator-guard.toml")
    assert "no user policy file" in done.stderr and "built-in policy applies" in done.stderr
    (home / "operator-guard.toml").write_text('[sandbox]\nmode = "sometimes"\n')
    done = invoke("policy", "check", home=home)
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert report["valid"] is False and "mode" in report["problems"][0]
    (home / "operator-guard.toml").write_text('[sandbox]\nmode = "off"\n')
    assert invoke("policy", "check", home=home).returncode == 0


@pytest.mark.usefixtures("bwrap_required")
def test_sandbox_check_in_the_home_directory_says_why_effects_are_off(tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / "project").mkdir(parents=True)
    env = {**os.environ, "HOME": str(user)}
    done = invoke("sandbox", "check", "--cwd", str(user), home=tmp_path / "guard", env=env)
    assert done.returncode == 0, done.stderr
    lines = {line.split(":", 1)[0]: line for line in done.stdout.splitlines()}
    assert lines["effects"] == (
        "effects:  off (the workspace is read-only here, so there is nothing to review)"
    )
    assert f"({user}, the workspace, is read-only here)" in lines["writable"]
    assert "start pi in a project folder" in done.stdout  # what to do instead
    done = invoke(
        "sandbox", "check", "--cwd", str(user / "project"), home=tmp_path / "guard", env=env
    )
    assert "effects:  review (in pi, every command writes" in done.stdout
    (tmp_path / "guard" / "operator-guard.toml").write_text('[sandbox]\neffects = "off"\n')
    done = invoke(
        "sandbox", "check", "--cwd", str(user / "project"), home=tmp_path / "guard", env=env
    )
    assert 'effects:  off (your policy says [sandbox] effects = "off")' in done.stdout


def test_audit_show_fits_120_columns_or_goes_wide(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    command = "rm -rf build && echo " + "x" * 150  # a preview longer than any line
    for _ in range(2):
        done = invoke(
            "record", "--tool", "bash", "--input", json.dumps({"command": command}),
            "--cwd", str(project), "--confirmed", home=home,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    shown = invoke("audit", "show", home=home)
    assert shown.returncode == 0
    assert max(len(line) for line in shown.stdout.splitlines()) <= 120
    wide = invoke("audit", "show", "--wide", home=home).stdout.splitlines()
    assert max(len(line) for line in wide) > 120
    # Nothing is cut: the compact lines hold every field of the wide ones, in order.
    compact = shown.stdout.splitlines()
    column = compact[0].index("DETAIL")
    wide_details = [line[wide[0].index("DETAIL") :] for line in wide[1:]]
    text = "".join(
        "\n" + line[column:] if line[:column].strip() else line[column:]
        for line in compact[1:]
    )  # fmt: skip
    joined = [t for t in text.split("\n") if t]
    assert [d.replace(" ", "") for d in wide_details] == [j.replace(" ", "") for j in joined]
    assert "'rm -rf build && echo xxx" in wide[-1]  # the preview in one line
