"""One CLI voice: every command that reads a guard home says the same line, with exit 2,
when there is none (``audit verify`` said ``keyring: file not found`` with exit 6)."""

from __future__ import annotations

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
