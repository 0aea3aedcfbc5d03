"""A recovery never launders a gap: ``audit report`` still counts what was set aside.

Attack: keep an early head, let an unconfirmed destructive call run, put the early head
back (the log no longer verifies), then ``audit recover`` (or let the appender take the
last record for one crash's unsigned tail). Before the fix the report read only the new
log and said ``no-gaps``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from tests.guard.cli.test_cli import one_line_error, record, run


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


def run_unconfirmed(home: Path, project: Path) -> None:
    g = Guard.open(home)
    g.tool_executed("call_2", "bash", {"command": "rm -rf src"}, project, False)
    g.close()


def report(home: Path) -> tuple[int, dict[str, Any]]:
    proc = run(home, "audit", "report", "--json")
    assert proc.returncode in (0, 5), proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return proc.returncode, out


def gap_of(out: dict[str, Any]) -> dict[str, Any]:
    (row,) = [r for r in out["rows"] if r["toolCallId"] == "call_2"]
    return row


def test_recover_after_an_old_head_is_put_back_keeps_the_gap(home: Path, project: Path) -> None:
    record(home, project, "--tool-call-id", "call_1")
    head = home / "audit.jsonl.head"
    old_head = head.read_bytes()
    assert report(home)[0] == 0
    run_unconfirmed(home, project)
    record(home, project)  # more records after the gap: not one crash's tail
    assert report(home)[0] == 5
    head.write_bytes(old_head)
    assert run(home, "audit", "verify").returncode == 4
    done = run(home, "audit", "recover", "--reason", "head put back", "--json")
    assert done.returncode == 0, done.stderr
    moved = json.loads(done.stdout)["movedTo"]
    assert run(home, "audit", "verify").returncode == 0

    code, out = report(home)
    assert (code, out["decision"]) == (5, "gaps")
    row = gap_of(out)
    assert (row["classification"], row["reason"], row["seq"]) == ("audit-gap", "no-evidence", None)
    assert row["source"].startswith(moved + " seq ")
    (source,) = out["external"]
    assert (source["kind"], source["location"], source["gaps"]) == ("set-aside-log", moved, 1)
    table = run(home, "audit", "report")
    assert table.returncode == 5 and moved in table.stdout, table.stdout

    # The set-aside file is pinned by the recovery record: changed or gone, no report.
    kept = home / moved
    data = kept.read_bytes()
    kept.write_bytes(data.replace(b"call_2", b"call_9"))
    changed = run(home, "audit", "report")
    assert changed.returncode == 4 and changed.stdout == ""
    assert "log-replaced" in one_line_error(changed) and moved in changed.stderr
    kept.unlink()
    gone = run(home, "audit", "report")
    assert gone.returncode == 4 and "log-replaced" in one_line_error(gone)


def test_an_unsigned_tail_set_aside_by_the_appender_keeps_the_gap(
    home: Path, project: Path
) -> None:
    record(home, project, "--tool-call-id", "call_1")
    head = home / "audit.jsonl.head"
    old_head = head.read_bytes()
    run_unconfirmed(home, project)
    # The head one record back: the execution looks like one crashed append's tail,
    # which the next append moves aside on its own.
    head.write_bytes(old_head)
    record(home, project)
    assert run(home, "audit", "verify").returncode == 0
    shown = run(home, "audit", "show", "--json", "--event", "log.recovered")
    (recovered,) = [json.loads(line)["data"] for line in shown.stdout.splitlines()]
    assert recovered["reason"] == "unsigned-tail"

    code, out = report(home)
    assert (code, out["decision"]) == (5, "gaps")
    assert gap_of(out)["source"].startswith(recovered["quarantinedTo"] + " seq ")


def test_a_damaged_line_in_the_set_aside_log_still_counts(home: Path, project: Path) -> None:
    record(home, project, "--tool-call-id", "call_1")
    run_unconfirmed(home, project)
    log = home / "audit.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    (at,) = [i for i, line in enumerate(lines) if b'"call_2"' in line]
    assert b"rm -rf src" in lines[at]
    lines[at] = lines[at].replace(b"rm -rf src", b"rm -rf SRC")  # its hash no longer matches
    log.write_bytes(b"".join(lines))
    assert run(home, "audit", "recover", "--reason", "line edited").returncode == 0
    code, out = report(home)
    assert (code, gap_of(out)["reason"]) == (5, "no-evidence")
