"""The agent can never answer its own question: every spelling of the guard's answering
commands (``approvals``, ``grants``) is blocked outright, never asked about."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard import Guard

SPELLINGS = [
    "pi-guard approvals approve apr_0123456789abcdefgh",
    "pi-guard approvals decline apr_0123456789abcdefgh --reason x",
    "pi-guard approvals serve --port 8080",
    "pi-guard --home ~/.pi/agent/operator-guard approvals list",
    "env pi-guard approvals list --json",
    "command pi-guard grants revoke --all",
    "pi-guard grants list",
    "python3 -m guard approvals approve apr_0123456789abcdefgh",
    "python -I -m guard grants revoke --all",
    "echo ok; pi-guard approvals approve apr_0123456789abcdefgh",
]


@pytest.mark.parametrize("command", SPELLINGS)
def test_every_spelling_of_answering_is_blocked(tmp_path: Path, command: str) -> None:
    with Guard.open(tmp_path / "home") as guard:
        evaluation = guard.evaluate("bash", {"command": command}, tmp_path)
    assert evaluation.verdict == "block", (command, evaluation.rule_ids)


def test_reading_the_log_stays_allowed(tmp_path: Path) -> None:
    with Guard.open(tmp_path / "home") as guard:
        assert guard.evaluate("bash", {"command": "pi-guard audit verify"}, tmp_path).verdict == (
            "allow"
        )
