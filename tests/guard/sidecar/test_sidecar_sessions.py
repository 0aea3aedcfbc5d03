"""Every record is attributable: three sessions' sidecars on one home, their calls
interleaved, each record names its own pi session and sidecar; a session that ends or
switches says so with its counts; ``audit show --session`` and the report go by session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from audit.verify import build_report, read_records, render_report
from guard._sidecar.handlers.methods import Sidecar
from tests.cli_runner import Result, invoke
from tests.guard.sidecar.test_sidecar_methods import call, result

pytestmark = pytest.mark.integration

needs_bwrap = pytest.mark.usefixtures("bwrap_required")


def start(home: Path, project: Path, session_id: str) -> Sidecar:
    server = Sidecar(home)
    params = {"cwd": str(project), "sessionId": session_id, "sessionFile": f"/s/{session_id}.jsonl",
              "mode": "print"}  # fmt: skip
    result(server, "sandbox.plan", params)
    return server


def ask_and_run(server: Sidecar, project: Path, call_id: str, yes: bool) -> None:
    """One risky call: asked, answered, and (on yes) run."""
    params = {**call(project), "toolCallId": call_id}
    if yes:
        result(server, "record", {**params, "confirmed": True})
        result(server, "audit.toolExecuted", {**params, "isError": False})
    else:
        result(server, "audit.declined", {**params, "reason": "declined"})


@needs_bwrap
def test_three_sessions_on_one_home_each_record_names_its_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    ids = ("sess-a", "sess-b", "sess-c")
    servers = [start(home, project, i) for i in ids]
    try:
        # Interleaved: a yes in a, a no in b, a yes in c, a yes in a, a no in c ...
        plan = [(0, True), (1, False), (2, True), (0, True), (2, False), (1, True)]
        for n, (which, yes) in enumerate(plan):
            ask_and_run(servers[which], project, f"{ids[which]}-{n}", yes)
    finally:
        for server in servers:
            server.close()
    records = list(read_records(home / "audit.jsonl"))
    for record in records:
        if record.event.startswith(("log.", "key.")):
            assert "session" not in record.data
            continue
        ref = record.data["session"]
        assert ref["id"] in ids, record
        assert ref["file"] == f"/s/{ref['id']}.jsonl"
        call_id = record.data.get("toolCallId")
        if call_id is not None:
            assert call_id.startswith(ref["id"]), record  # the session that made the call
    assert len({r.data["session"]["guardPid"] for r in records if "session" in r.data}) == 1
    ended = {r.data["session"]["id"]: r.data for r in records if r.event == "session.ended"}
    counts = ("reason", "asked", "confirmed", "declined", "blocked", "executed")
    assert [ended["sess-a"][k] for k in counts] == ["shutdown", 2, 2, 0, 0, 2]
    assert (ended["sess-b"]["confirmed"], ended["sess-b"]["declined"]) == (1, 1)
    assert (ended["sess-c"]["confirmed"], ended["sess-c"]["declined"]) == (1, 1)
    started = [r for r in records if r.event == "session.started"]
    assert [r.data["mode"] for r in started] == ["print"] * 3

    report = build_report(records)
    assert report.summary.by_session == {
        "sess-a": {"executions": 2, "gaps": 0, "confirmed": 2, "declined": 0, "stopped": 0, "blocked": 0,
                   "allowedByRule": 0},
        "sess-b": {"executions": 1, "gaps": 0, "confirmed": 1, "declined": 1, "stopped": 0, "blocked": 0,
                   "allowedByRule": 0},
        "sess-c": {"executions": 1, "gaps": 0, "confirmed": 1, "declined": 1, "stopped": 0, "blocked": 0,
                   "allowedByRule": 0},
    }  # fmt: skip
    assert {r.session for r in report.rows} == set(ids)
    assert "    sess-b: 1 risky ran (0 gaps), 1 yes, 1 no, 0 blocked, 0 by a user rule" in (
        render_report(report)
    )

    shown = cli(home, "audit", "show", "--session", "sess-b", "--json")
    assert shown.returncode == 0, shown.stderr
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    assert lines and {line["data"]["session"]["id"] for line in lines} == {"sess-b"}
    unknown = cli(home, "audit", "show", "--session", "sess-z")
    assert unknown.returncode == 2 and "sess-a, sess-b, sess-c" in unknown.stderr


@needs_bwrap
def test_a_switch_to_another_session_ends_the_first_with_its_counts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    server = start(home, project, "first")
    try:
        ask_and_run(server, project, "first-1", True)
        result(server, "sandbox.plan", {"cwd": str(project), "sessionId": "second"})
        ask_and_run(server, project, "second-2", False)
        status = result(server, "status")
        assert (
            "this session: asked 1 (yes 0, no 1), blocked 0, ran 0 [session second]"
            in (status["text"])
        )
    finally:
        server.close()
    records = list(read_records(home / "audit.jsonl"))
    ended = [(r.data["session"]["id"], r.data["reason"], r.data["confirmed"], r.data["declined"])
             for r in records if r.event == "session.ended"]  # fmt: skip
    assert ended == [("first", "switched", 1, 0), ("second", "shutdown", 0, 1)]


def cli(home: Path, *args: str) -> Result:
    return invoke(*args, env={**os.environ, "PI_OPERATOR_GUARD_HOME": str(home)})


@needs_bwrap
def test_a_late_record_names_the_session_it_happened_in(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    server = start(home, project, "now")
    kept = {
        "at": "2026-01-02T03:04:05.678Z",
        "kind": "declined",
        "reason": "sidecar-unavailable",
        "toolName": "bash",
        "input": {"command": "ls"},
        "cwd": str(project),
    }
    try:
        result(server, "audit.replay", {"events": [
            {**kept, "id": "spool_0000000000000001", "toolCallId": "then",
             "sessionId": "then-session", "sessionFile": "/s/then.jsonl"},
            {**kept, "id": "spool_0000000000000002", "toolCallId": "unknown"},
        ]})  # fmt: skip
        counts = result(server, "status")["sessionCounts"]
    finally:
        server.close()
    late = {
        r.data["toolCallId"]: r.data.get("session")
        for r in read_records(home / "audit.jsonl")
        if r.data.get("deliveredLate")
    }
    assert late == {"then": {"id": "then-session", "file": "/s/then.jsonl"}, "unknown": None}
    assert counts["blocked"] == 0  # not this session's blocks
