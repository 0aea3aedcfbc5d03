"""The guard appends typed events: the records it writes are the mappings it wrote before
(the same facts, the same bytes; the events about calls, grants and the effects review are
in ``test_typed_call_events.py`` and ``test_typed_grant_events.py``), and no event is appended
by name with a mapping any more."""

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

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

STILL_MAPPINGS: dict[str, set[str]] = {}
"""Events guard still appends by name with a camelCase mapping, and where: none (every event
is appended as its typed model), and the list stays empty."""


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


def test_no_event_is_appended_by_name_with_a_mapping() -> None:
    assert _appended_by_name() == STILL_MAPPINGS


def _audit_appends_with_data() -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / "guard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if (
                node.func.attr == "append"
                and name in ("audit", "log")
                and len(node.args) + len(node.keywords) > 1
            ):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    return found


def test_no_audit_append_in_guard_takes_a_name_and_data() -> None:
    # A name held in a variable escapes the scan above: no append to an audit log in guard
    # passes data beside its event (a typed event carries its own).
    assert _audit_appends_with_data() == []


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
    g.sessions.started(
        scope,
        "sandboxed",
        pi_version="0.70.2",
        mode="tui",
        network="allowlist",
        message="dropped: the session is sandboxed",
        tools=[{"name": "bash", "source": "builtin"}],
    )
    digest = g.grants.policy_digest(scope)
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

    g.sessions.started(scope, "unavailable", reason="no-bwrap", message="m", mode="other")
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
    g.sessions.approval_refused("stale", "web", "appr_" + "x" * 80, count=2)
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
    g.sessions.approval_refused("other-user", "cli", None)
    assert _last(g) == (
        "approval.refused",
        {"reason": "other-user", "approver": "cli", "session": session},
    )
    g.sessions.network_refused("", 443, "not-allowed", "/p")
    assert _last(g) == (
        "network.refused",
        {"host": "?", "port": 443, "reason": "not-allowed", "scope": "/p", "session": session},
    )
    g.sessions.ended("shutdown")
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
