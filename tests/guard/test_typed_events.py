"""The guard appends typed events: the records it writes for the converted events are the
mappings it wrote before (the same facts, the same bytes), and the events it still appends as
a mapping are a list that only shrinks."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest

from audit import shorten
from audit.verify import read_records
from audit.wire import KNOWN_EVENTS, canonical_json
from guard import Guard

ROOT = Path(__file__).resolve().parents[2]

STILL_MAPPINGS: dict[str, set[str]] = {
    "confirmation.declined": {"guard/_facade/base.py", "guard/_facade/outcomes.py"},
    "confirmation.recorded": {"guard/_facade/base.py"},
    "effects.resolved": {"guard/_facade/effects.py"},
    "effects.reviewed": {"guard/_facade/effects.py"},
    "evidence.consumed": {"guard/_facade/guard.py"},
    "evidence.rejected": {"guard/_facade/guard.py"},
    "grant.created": {"guard/_grants/desk.py"},
    "grant.expired": {"guard/_grants/desk.py"},
    "grant.revoked": {"guard/_grants/desk.py"},
    "grant.used": {"guard/_facade/grants.py"},
    "tool.executed": {"guard/_facade/outcomes.py"},
}
"""Events guard still appends by name with a camelCase mapping, and where. The list only
shrinks: converting an event to its typed model fails this test until its entry is gone."""


def _appended_by_name() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "guard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "_append")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in KNOWN_EVENTS
            ):
                event = str(node.args[0].value)
                found.setdefault(event, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_the_events_still_appended_as_mappings_are_the_shrinking_list() -> None:
    assert _appended_by_name() == STILL_MAPPINGS


@pytest.fixture
def g(tmp_path: Path) -> Any:
    with Guard.open(tmp_path / "home") as opened:
        opened.attribute("session-1", "/s/1.jsonl")
        yield opened


def _last(g: Guard) -> tuple[str, dict[str, Any]]:
    record = list(read_records(g.audit.path))[-1]
    return record.event, record.data


def test_session_started_writes_the_mapping_it_wrote_before(g: Guard, tmp_path: Path) -> None:
    scope = str(tmp_path)
    g.session_started(
        scope,
        "sandboxed",
        pi_version="0.70.2",
        mode="tui",
        network="allowlist",
        message="dropped: the session is sandboxed",
        tools=[{"name": "bash", "source": "builtin"}],
    )
    digest = g.policy_digest(scope)
    session = {"id": "session-1", "file": "/s/1.jsonl", "guardPid": os.getpid()}
    before = {
        "sandbox": "sandboxed",
        "scope": scope,
        "sidecarRestarted": False,
        "policyDigest": digest,
        "mode": "tui",
        "network": "allowlist",
        "piVersion": "0.70.2",
        "tools": [{"name": "bash", "source": "builtin"}],
        "session": session,
    }
    event, data = _last(g)
    assert event == "session.started"
    assert canonical_json(data) == canonical_json(before)

    g.session_started(scope, "unavailable", reason="no-bwrap", message="m", mode="other")
    event, data = _last(g)
    assert data == {
        "sandbox": "unavailable",
        "scope": scope,
        "sidecarRestarted": False,
        "policyDigest": digest,
        "reason": "no-bwrap",
        "message": "m",
        "session": session,
    }


def test_session_ended_and_refusals_write_the_mappings_they_wrote_before(g: Guard) -> None:
    session = {"id": "session-1", "file": "/s/1.jsonl", "guardPid": os.getpid()}
    g.approval_refused("stale", "web", "appr_" + "x" * 80, count=2)
    assert _last(g) == (
        "approval.refused",
        {
            "reason": "stale",
            "approver": "web",
            "approvalId": shorten("appr_" + "x" * 80, 64),
            "count": 2,
            "session": session,
        },
    )
    g.approval_refused("other-user", "cli", None)
    assert _last(g) == (
        "approval.refused",
        {"reason": "other-user", "approver": "cli", "session": session},
    )
    g.network_refused("", 443, "not-allowed", "/p")
    assert _last(g) == (
        "network.refused",
        {"host": "?", "port": 443, "reason": "not-allowed", "scope": "/p", "session": session},
    )
    g.session_ended("shutdown")
    assert _last(g) == (
        "session.ended",
        {
            "reason": "shutdown",
            "asked": 0,
            "confirmed": 0,
            "declined": 0,
            "blocked": 0,
            "executed": 0,
            "covered": 0,
            "session": session,
        },
    )
