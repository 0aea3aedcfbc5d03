"""Every block is counted and everything that ran says why: a call stopped because the
sandbox could not start or the sidecar was down is in the log and the report whatever its
kind (local-safe included), and a call a user rule let through without asking is logged
with that rule and what it was, and counted apart in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audit.verify import build_report, read_records, render_report
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import call, records, result

RELAX_RM = """
[[rule]]
id = "me.build-is-scratch"
verdict = "allow"
program = ["rm"]
target_paths = ["build", "build/**"]
relaxes = ["builtin.rm"]
"""


def served(tmp_path: Path, policy: str = "") -> tuple[Sidecar, Path]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    if policy:
        (home / "operator-guard.toml").write_text(policy)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    return Sidecar(home), project


def report_of(server: Sidecar) -> Any:
    return build_report(read_records(server.home / "audit.jsonl"))


def test_a_command_blocked_because_the_sandbox_cannot_start_is_counted(tmp_path: Path) -> None:
    server, project = served(tmp_path)
    try:
        reply = result(
            server,
            "audit.declined",
            {**call(project, "ls -la"), "toolCallId": "c1", "reason": "sandbox-unavailable"},
        )
        assert reply["audited"] is True and "[reason: sandbox-unavailable]" in reply["blockReason"]
        (declined,) = records(server.home, "confirmation.declined")
        assert declined["reason"] == "sandbox-unavailable"
        assert declined["actionKind"] == "local-safe" and declined["preview"] == "ls -la"
        report = report_of(server)
        assert report.summary.blocked == 1
        assert report.summary.blocked_by_reason == {"sandbox-unavailable": 1}
        assert "ls -la" in render_report(report)
    finally:
        server.close()


def test_a_local_safe_call_blocked_while_the_sidecar_was_down_is_replayed_and_counted(
    tmp_path: Path,
) -> None:
    server, project = served(tmp_path)
    try:
        spooled = {
            "id": "spool_0000000000000001",
            "at": "2026-01-02T03:04:05.678Z",
            "kind": "declined",
            "reason": "sidecar-unavailable",
            "toolName": "read",
            "input": {"path": "README.md"},
            "cwd": str(project),
            "toolCallId": "c7",
        }
        reply = result(server, "audit.replay", {"events": [spooled]})
        assert reply["delivered"] == ["spool_0000000000000001"], reply
        (declined,) = records(server.home, "confirmation.declined")
        assert declined["actionKind"] == "local-safe" and declined["deliveredLate"] is True
        report = report_of(server)
        assert report.summary.blocked_by_reason == {"sidecar-unavailable": 1}
        assert report.stopped[0].tool_call_id == "c7"
    finally:
        server.close()


def test_a_call_a_user_rule_let_through_names_the_rule_and_what_it_was(tmp_path: Path) -> None:
    server, project = served(tmp_path, RELAX_RM)
    try:
        evaluated = result(server, "evaluate", {**call(project), "toolCallId": "c1"})
        assert evaluated["action"] == "allow"  # no dialog: the user's rule relaxed builtin.rm
        result(
            server, "audit.toolExecuted", {**call(project), "toolCallId": "c1", "isError": False}
        )
        result(
            server,
            "audit.toolExecuted",
            {**call(project, "ls"), "toolCallId": "c2", "isError": False},
        )
        executed = records(server.home, "tool.executed")
        assert executed[0]["ruleIds"] == ["me.build-is-scratch"]
        assert executed[0]["preview"] == "rm -rf build"
        assert "ruleIds" not in executed[1] and executed[1]["preview"] == "ls"
        report = report_of(server)
        assert report.summary.allowed_by_rule == 1
        assert report.summary.allowed_by_rule_id == {"me.build-is-scratch": 1}
        (row,) = report.allowed
        assert (row.tool_call_id, row.rule_ids, row.preview) == (
            "c1",
            ("me.build-is-scratch",),
            "rm -rf build",
        )
        text = render_report(report)
        assert "ran without asking because a user rule allowed it: 1" in text
        assert "me.build-is-scratch: 1" in text
        assert max(len(line) for line in text.splitlines()) <= 120, text
    finally:
        server.close()
