"""The agent can never answer its own question: every spelling of the guard's answering
commands (``approvals``, ``grants``, and ``operator``, which enrols or removes the passkey that
signs each Yes) is blocked outright, never asked about."""

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
    "pi-guard operator enroll --port 8790",
    "pi-guard operator list",
    "pi-guard operator remove AAAA",
    "pi-guard --home ~/.pi/agent/operator-guard operator enroll --label agent",
    "env PI_OPERATOR_GUARD_HOME=/tmp/h pi-guard operator enroll",
    "command pi-guard operator remove AAAA",
    "nohup pi-guard operator enroll --timeout 3600 &",
    "python3 -m guard operator enroll",
    "python -I -m guard --home /tmp/h operator list --json",
    "true && pi-guard operator enroll",
    "echo ok; pi-guard operator enroll",
    "(pi-guard operator enroll)",
    "bash -c 'pi-guard operator enroll'",
    "timeout 60 pi-guard operator enroll",
]


@pytest.mark.parametrize("command", SPELLINGS)
def test_every_spelling_of_answering_is_blocked(tmp_path: Path, command: str) -> None:
    with Guard.open(tmp_path / "home") as guard:
        evaluation = guard.evaluate("bash", {"command": command}, tmp_path)
    assert evaluation.verdict == "block", (command, evaluation.rule_ids)


@pytest.mark.parametrize(
    "command", ["p=pi-guard; $p operator enroll", 'eval "pi-guard operator remove AAAA"']
)
def test_a_command_built_at_run_time_is_never_run_unasked(tmp_path: Path, command: str) -> None:
    """What the analysis cannot read before it runs is the operator's to answer, never
    allowed silently (and the guard home it would write is hidden from the sandbox)."""
    with Guard.open(tmp_path / "home") as guard:
        evaluation = guard.evaluate("bash", {"command": command}, tmp_path)
    assert evaluation.verdict in ("confirm", "block"), (command, evaluation.rule_ids)


def test_reading_the_log_stays_allowed(tmp_path: Path) -> None:
    with Guard.open(tmp_path / "home") as guard:
        assert guard.evaluate("bash", {"command": "pi-guard audit verify"}, tmp_path).verdict == (
            "allow"
        )
