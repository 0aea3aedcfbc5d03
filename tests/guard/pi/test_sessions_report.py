"""``audit report --sessions``: destructive/protected calls that ran with no guard record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.verify import build_report, read_records, render_report
from guard import Guard
from guard._cli import main
from guard._pi.sessions_report import guard_absent_rows
from guard._policy.cache import PolicyCache

RM = {"command": "rm -rf build"}
ENV = {"path": ".env", "content": "TOKEN=x\n"}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}, *calls]}
    return {
        "type": "message",
        "id": "a1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def result(call_id: str, name: str, *, error: bool = False) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": "done"}],
        "isError": error,
    }
    return {
        "type": "message",
        "id": "r1",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }


def session(path: Path, cwd: Path, *entries: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": str(cwd)}
    lines = [json.dumps(header), *(json.dumps(e) for e in entries)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_unguarded_destructive_and_protected_runs_are_guard_absent(
    project: Path, home: Path, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    session(
        sessions / "--project--" / "one.jsonl",
        project,
        assistant(call("c1", "bash", RM), call("c2", "read", {"path": "README.md"})),
        result("c1", "bash"),
        result("c2", "read"),
        assistant(call("c3", "write", ENV)),
        result("c3", "write", error=True),
        assistant(call("c4", "bash", {"command": "rm -rf dist"})),  # no result: not counted
    )
    with Guard.open(home):
        pass
    records = list(read_records(home / "audit.jsonl"))
    rows, source = guard_absent_rows(sessions, records, PolicyCache(home))
    assert [(r.tool_call_id, r.action_kind, r.reason) for r in rows] == [
        ("c1", "destructive", "guard-absent"),
        ("c3", "protected", "guard-absent"),
    ]
    assert rows[1].is_error is True
    assert rows[1].path == str(project / ".env")
    assert rows[0].seq is None
    assert rows[0].source == f"{sessions / '--project--' / 'one.jsonl'}:3"
    assert (source.files, source.executions, source.gaps, source.unreadable) == (1, 2, 2, 0)

    report = build_report(records, external_rows=rows, external_sources=(source,))
    assert report.decision == "gaps"
    assert report.exit_code == 5
    assert report.summary.gaps_by_reason["guard-absent"] == 2
    text = render_report(report, wide=True)
    assert "guard-absent: 2" in text
    assert "also searched pi-sessions" in text
    assert "SOURCE" in text
    compact = render_report(report)
    assert "GAP guard-absent" in compact
    table = [
        line for line in compact.splitlines() if line[:1].isdigit() or line[:3] in ("SEQ", "-  ")
    ]
    assert table and max(len(line) for line in table) <= 120


def test_a_run_with_guard_records_is_not_counted(
    project: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    session(
        sessions / "a.jsonl",
        project,
        assistant(call("g1", "bash", RM)),
        result("g1", "bash"),
        assistant(call("g2", "write", ENV)),
        result("g2", "write", error=True),  # the guard blocked it: declined, not executed
        assistant(call("g3", "bash", RM)),
        result("g3", "bash"),  # guard records without a toolCallId, matched by fingerprint
        assistant(call("g4", "bash", RM)),
        result("g4", "bash"),  # that record is used up: this one ran unguarded
    )
    with Guard.open(home) as guard:
        rec = guard.record("bash", RM, project, confirmed=True, tool_call_id="g1")
        assert rec.envelope is not None
        guard.tool_executed(
            "g1", "bash", RM, project, False, evidence_id=rec.envelope.details.evidence_id
        )
        guard.record("write", ENV, project, confirmed=False, tool_call_id="g2")
        guard.record("bash", RM, project, confirmed=False)  # no toolCallId
    assert (
        main(["--home", str(home), "audit", "report", "--sessions", str(sessions), "--json"]) == 5
    )
    report = json.loads(capsys.readouterr().out)
    absent = [r["toolCallId"] for r in report["rows"] if r["reason"] == "guard-absent"]
    assert absent == ["g4"]
    (g1,) = [r for r in report["rows"] if r["toolCallId"] == "g1"]
    assert g1["classification"] == "auditable"
    assert report["external"][0]["executions"] == 4


def test_a_guard_record_for_another_folder_does_not_count(
    project: Path, home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    sessions = tmp_path / "sessions"
    session(sessions / "a.jsonl", project, assistant(call("x1", "bash", RM)), result("x1", "bash"))
    with Guard.open(home) as guard:
        guard.record("bash", RM, other, confirmed=False, tool_call_id="x1")
    records = list(read_records(home / "audit.jsonl"))
    rows, _ = guard_absent_rows(sessions, records, PolicyCache(home))
    assert [r.tool_call_id for r in rows] == ["x1"]


def test_without_any_audit_log_every_risky_run_is_guard_absent(
    project: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    session(sessions / "a.jsonl", project, assistant(call("n1", "bash", RM)), result("n1", "bash"))
    assert main(["--home", str(home), "audit", "report", "--sessions", str(sessions)]) == 5
    captured = capsys.readouterr()
    assert "guard-absent: 1" in captured.out
    assert "no audit log" in captured.err
    assert not home.exists()


def test_torn_and_foreign_lines_are_skipped(project: Path, home: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    path = session(
        sessions / "a.jsonl", project, assistant(call("t1", "bash", RM)), result("t1", "bash")
    )
    with path.open("a") as handle:
        handle.write('{"type":"message","message":{"role":"toolCall"')  # torn last line
    (sessions / "notes.txt").write_text("not a session")
    rows, source = guard_absent_rows(sessions, [], PolicyCache(home))
    assert [r.tool_call_id for r in rows] == ["t1"]
    assert source.unreadable == 1


def test_sessions_must_be_a_directory(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--home", str(home), "audit", "report", "--sessions", str(tmp_path / "nope")])
    assert code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "nope") in err
    assert "PosixPath" not in err


def test_without_sessions_the_report_is_unchanged(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Guard.open(home):
        pass
    assert main(["--home", str(home), "audit", "report", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["external"] == []
    assert report["rows"] == []
