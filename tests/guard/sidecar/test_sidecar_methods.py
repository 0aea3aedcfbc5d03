"""The sidecar's methods (``guard/_sidecar/handlers/methods.py``), field by field, over real homes.

Each method is driven through the real :class:`Sidecar` (its JSON-RPC entry point where the
request count matters) and checked for what the shim, a monitor, the operator and an auditor
rely on: exact reply fields and text, the audit records appended, the log events, and the
security boundaries (a monitor's consume is bound to the call and trusts only a log signed by
its keyring; a replay accepts events up to ``REPLAY_SKEW`` ahead and none further, and never
logs one spool id twice). Written from the survivors of ``make mutants``.
"""

from __future__ import annotations

import errno
import importlib.metadata
import io
import json
import os
from collections.abc import Iterator, MutableMapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from freezegun import freeze_time

from audit.verify import read_records, verify_log
from audit.wire import format_iso
from guard._errors import GuardError, StateError
from guard._sidecar.framing import MAX_LINE_BYTES, RpcCode
from guard._sidecar.handlers.methods import PROTOCOL, REPLAY_SKEW, Sidecar, serve
from guard._sidecar.session import open_problem
from guard._sidecar.wire import ReplayParams

needs_bwrap = pytest.mark.usefixtures("bwrap_required")

Logs = list[MutableMapping[str, Any]]
NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)  # the frozen clock of the tests that need one


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    served = Sidecar(tmp_path / "home")
    assert served.session.home.guard is not None
    yield served
    served.close()


def call(project: Path, command: str = "rm -rf build", **extra: Any) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": command}, "cwd": str(project), **extra}


def result(server: Sidecar, method: str, params: Any = None) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = server.handle_message(message)
    assert reply is not None and "error" not in reply, reply
    return reply["result"]


def error(server: Sidecar, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = server.handle_message(message)
    assert reply is not None and "result" not in reply, reply
    err: dict[str, Any] = reply["error"]
    return err


def records(home: Path, event: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records(home / "audit.jsonl") if r.event == event]


def monitor_home(tmp_path: Path, guard_home: Path, name: str = "monitor") -> Path:
    """A monitor's home: only the guard's public keyring, no signing key."""
    home = tmp_path / name
    home.mkdir(mode=0o700)
    (home / "keyring.json").write_bytes((guard_home / "keyring.json").read_bytes())
    return home


# -- open_problem: which file, and why ---------------------------------------------------------


def test_a_state_error_names_its_own_file_and_problem(tmp_path: Path) -> None:
    exc = StateError(tmp_path / "keyring.json", "cannot read: Is a directory")
    assert open_problem(tmp_path, exc) == (
        str(tmp_path / "keyring.json"),
        "cannot read: Is a directory",
    )


def test_an_os_error_names_its_file_and_the_os_words(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "audit.jsonl"
    with pytest.raises(OSError) as caught:
        missing.open()
    assert open_problem(tmp_path, caught.value) == (str(missing), "No such file or directory")


def test_an_os_error_without_a_file_or_words_names_the_home_and_the_error(tmp_path: Path) -> None:
    bare = OSError("the disk went away")
    assert open_problem(tmp_path, bare) == (str(tmp_path), "the disk went away")
    coded = OSError(errno.EIO, "Input/output error")
    assert open_problem(tmp_path, coded) == (str(tmp_path), "Input/output error")


def test_another_error_names_the_home_and_its_message(tmp_path: Path) -> None:
    assert open_problem(tmp_path, GuardError("keyring unreadable")) == (
        str(tmp_path),
        "keyring unreadable",
    )


def test_an_audit_log_that_cannot_be_opened_names_the_home_in_the_footer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "audit.jsonl").mkdir()
    served = Sidecar(home)
    try:
        footer = result(served, "health")["statusText"]
        problem = f"{home / 'audit.jsonl'}: cannot open: Is a directory"
        assert served.session.home.open_problem == (str(home), problem)
        assert footer == f"operator-guard home unusable ({home}: {problem})"
    finally:
        served.close()


def test_every_refusal_of_an_unusable_home_names_the_home_the_error_and_the_file(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "keyring.json").mkdir()
    served = Sidecar(home)
    try:
        refused = error(served, "evaluate", call(project))
        health = result(served, "health")
    finally:
        served.close()
    keyring = home / "keyring.json"
    assert refused == {
        "code": RpcCode.GUARD_UNAVAILABLE,
        "message": "Guard unavailable",
        "data": {
            "reason": "guard-open-failed",
            "home": str(home),
            "error": f"KeyringError: keyring: cannot read: Is a directory ({keyring})",
            "detail": f"home unusable ({keyring}: cannot read: Is a directory)",
        },
    }
    assert health["ok"] is False
    assert health["keyId"] is None
    assert health["error"] == refused["data"]["error"]


def test_a_home_that_cannot_be_opened_is_logged_with_the_home_and_the_error(
    tmp_path: Path, logs: Logs
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "keyring.json").mkdir()
    Sidecar(home).close()
    keyring = home / "keyring.json"
    assert [e for e in logs if e["event"] == "guard-open-failed"] == [
        {
            "event": "guard-open-failed",
            "log_level": "error",
            "home": str(home),
            "error": f"KeyringError: keyring: cannot read: Is a directory ({keyring})",
        }
    ]


# -- the method table ------------------------------------------------------------------------------

READ_ONLY = ["audit.verify", "consume", "describe", "health", "ping"]
WRITING = [
    "approvals.answer",
    "audit.declined",
    "audit.replay",
    "audit.toolExecuted",
    "effects.resolve",
    "effects.review",
    "evaluate",
    "grants.list",
    "grants.revoke",
    "plan",
    "record",
    "sandbox.plan",
    "status",
]


def test_a_monitor_offers_exactly_the_methods_that_write_nothing(
    tmp_path: Path, sidecar: Sidecar
) -> None:
    assert result(sidecar, "describe")["methods"] == sorted(READ_ONLY + WRITING)
    monitor = Sidecar(monitor_home(tmp_path, sidecar.home), verify_only=True)
    try:
        assert result(monitor, "describe")["methods"] == READ_ONLY
        assert result(monitor, "ping") == {"pong": True}
        for method in WRITING:
            assert error(monitor, method, {}) == {
                "code": RpcCode.NOT_AVAILABLE,
                "message": "Not available in verify-only mode",
                "data": {"reason": "verify-only", "method": method},
            }
    finally:
        monitor.close()


def test_audit_replay_is_served_under_its_name(sidecar: Sidecar, project: Path) -> None:
    event = spooled(1, project, at="2026-01-02T03:04:05.678Z")
    assert result(sidecar, "audit.replay", {"events": [event]}) == {
        "delivered": ["spool_0000000000000001"],
        "duplicates": [],
        "skipped": [],
        "rejected": [],
    }


# -- health ----------------------------------------------------------------------------------------


def test_health_gives_every_field_and_the_uptime_in_milliseconds(tmp_path: Path) -> None:
    with freeze_time(NOW) as clock:
        served = Sidecar(tmp_path / "home")
        try:
            clock.tick(timedelta(seconds=1.23456))
            health = result(served, "health")
            key_id = served.session.home.guard.key_id  # type: ignore[union-attr]
        finally:
            served.close()
    assert health == {
        "ok": True,
        "pid": os.getpid(),
        "uptimeSeconds": 1.235,
        "requests": 1,
        "verifyOnly": False,
        "home": str(tmp_path / "home"),
        "keyId": key_id,
        "error": None,
        "statusText": f"operator-guard on (sidecar pid {os.getpid()})",
    }
    assert isinstance(health["uptimeSeconds"], float)


def test_health_still_answers_when_the_key_cannot_be_read(sidecar: Sidecar) -> None:
    (sidecar.home / "keyring.json").write_text("{not json")
    health = result(sidecar, "health")
    assert health["keyId"] is None
    assert health["ok"] is True


# -- anchoring at session start and end ------------------------------------------------------------


def test_a_session_logs_each_anchor_it_keeps(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, logs: Logs
) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(tmp_path / "anchors"))
    served = Sidecar(tmp_path / "home")
    try:
        result(served, "audit.toolExecuted", call(project, toolCallId="c1", isError=False))
    finally:
        served.close()
    assert [e for e in logs if e["event"] == "anchored"] == [
        {
            "event": "anchored",
            "log_level": "info",
            "when": "session-start",
            "size": 2,
            "created": True,
        },
        {
            "event": "anchored",
            "log_level": "info",
            "when": "session-end",
            "size": 3,
            "created": True,
        },
    ]


def test_an_anchor_that_cannot_be_kept_is_logged_with_where_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: Logs
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the anchor directory should be")
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(blocker))
    served = Sidecar(tmp_path / "home")
    assert result(served, "ping") == {"pong": True}
    served.close()
    failed = [e for e in logs if e["event"] == "anchor-failed"]
    assert [(e["log_level"], e["when"], e["anchor"]) for e in failed] == [
        ("warning", "session-start", str(blocker)),
        ("warning", "session-end", str(blocker)),
    ]
    for event in failed:
        assert event["error"].startswith(f"[Errno 20] Not a directory: '{blocker}/log_")


# -- describe ------------------------------------------------------------------------------------


def test_describe_names_the_package_its_version_and_the_line_limit(sidecar: Sidecar) -> None:
    described = result(sidecar, "describe")
    assert set(described) == {
        "name",
        "protocol",
        "version",
        "verifyOnly",
        "maxLineBytes",
        "methods",
        "params",
        "notifications",
        "tools",
    }
    assert described["name"] == "pi-operator-guard"
    # The one message the sidecar sends unasked, described like a method's params.
    pushed = described["notifications"]["approvals.answered"]
    assert set(pushed["required"]) == {"id", "answer"}
    assert described["protocol"] == PROTOCOL == "pi-operator-guard/sidecar/v1"
    assert described["version"] == importlib.metadata.version("pi-operator-guard")
    assert described["verifyOnly"] is False
    assert described["maxLineBytes"] == MAX_LINE_BYTES


def test_describe_from_a_bare_checkout_says_version_0(
    sidecar: Sidecar, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert result(sidecar, "describe")["version"] == "0"


# -- status: the fields and the text of /guard ---------------------------------------------------


def test_status_gives_every_field_and_the_text_of_guard(sidecar: Sidecar, project: Path) -> None:
    record = result(sidecar, "record", call(project, confirmed=True))
    result(sidecar, "consume", call(project, envelope=record["envelope"]))
    status = result(sidecar, "status")
    home = sidecar.home
    key_id = result(sidecar, "health")["keyId"]
    assert status["sidecar"] == {"pid": os.getpid(), "requests": 3}
    assert status["auditIntact"] is True
    assert status["home"] == str(home)
    assert status["consumedIds"] == 1
    assert status["text"] == "\n".join(
        [
            "operator-guard status",
            f"  key:          {key_id}",
            f"  home:         {home}",
            f"  audit log:    {home / 'audit.jsonl'}",
            "  consumed ids: 1",
            "  audit verify: intact",
            f"  sidecar pid:  {os.getpid()} (3 requests)",
            "  sandbox:      not planned yet (no session started in this sidecar)",
            "  this session: asked 1 (yes 1, no 0), blocked 0, ran 0",
            "  telemetry:    off (not-enabled: no user policy file)",
            "  policy:       ok",
        ]
    )
    assert status["telemetry"]["state"] == "off"
    assert status["sessionCounts"] == {
        "asked": 1,
        "confirmed": 1,
        "declined": 0,
        "blocked": 0,
        "executed": 0,
        "covered": 0,
    }


def test_status_says_not_intact_when_the_log_is_tampered_under_it(
    sidecar: Sidecar, project: Path
) -> None:
    result(sidecar, "record", call(project, confirmed=True))
    log = sidecar.home / "audit.jsonl"
    log.write_bytes(log.read_bytes().replace(b"rm -rf build", b"rm -rf BUILD"))
    status = result(sidecar, "status")
    assert status["auditIntact"] is False
    assert "\n  audit verify: NOT INTACT\n" in status["text"]


# -- evaluate ----------------------------------------------------------------------------------

LONG_TAIL = " ".join(f"arg{i}" for i in range(60))


def test_a_call_the_policy_blocks_is_audited_and_told_in_full(
    sidecar: Sidecar, project: Path
) -> None:
    params = call(project, f"rm -rf / {LONG_TAIL}", toolCallId="call-3")
    reply = result(sidecar, "evaluate", params)
    assert reply["action"] == "block"
    assert reply["audited"] is True
    assert reply["dialog"] is None
    assert reply["evaluation"]["verdict"] == "block"
    assert isinstance(reply["evaluation"]["reasons"], list)
    assert reply["evaluation"]["ruleIds"][0] == "builtin.catastrophic-target"
    reason = reply["blockReason"]
    assert reason.startswith(
        "operator-guard blocked this destructive bash call: the policy blocks it outright."
    )
    assert "arg58 arg59." in reason  # the whole command, not the evaluation's short preview
    assert reason.endswith("[reason: blocked-by-policy]")
    (data,) = records(sidecar.home, "confirmation.declined")
    assert data["reason"] == "blocked-by-policy"
    assert data["toolCallId"] == "call-3"
    assert data["toolName"] == "bash"


def test_without_a_ui_a_call_is_blocked_audited_and_told_in_full(
    sidecar: Sidecar, project: Path
) -> None:
    params = call(project, f"rm -rf build {LONG_TAIL}", toolCallId="call-4", hasUi=False)
    reply = result(sidecar, "evaluate", params)
    assert reply["action"] == "block"
    assert reply["audited"] is True
    reason = reply["blockReason"]
    assert reason.startswith("operator-guard blocked this destructive bash call: it needs")
    assert "arg58 arg59." in reason
    (data,) = records(sidecar.home, "confirmation.declined")
    assert data["reason"] == "no-ui"
    assert data["toolCallId"] == "call-4"


# -- plan and audit.verify -------------------------------------------------------------------------


def test_a_plan_reply_is_plain_json(sidecar: Sidecar) -> None:
    plan = result(sidecar, "plan", {"planner": "channel", "params": {}})
    assert plan["channel"] == "blocked"
    assert isinstance(plan["reasons"], list)
    assert isinstance(plan["nextActions"], list)


def test_a_monitor_verifies_with_the_keyring_and_passes_allow_unanchored(
    sidecar: Sidecar, project: Path
) -> None:
    result(sidecar, "record", call(project, confirmed=True))
    monitor = Sidecar(sidecar.home, verify_only=True)  # reads the guard's log, signs nothing
    try:
        verified = result(monitor, "audit.verify", {"allowUnanchored": True})
        strict = result(monitor, "audit.verify", {})
    finally:
        monitor.close()
    assert verified["decision"] == "intact"
    assert verified["allowUnanchored"] is True
    assert verified["reasons"] == []
    assert isinstance(verified["reasons"], list)
    assert strict["allowUnanchored"] is False


def test_the_guard_passes_allow_unanchored_to_its_own_verify(sidecar: Sidecar) -> None:
    verified = result(sidecar, "audit.verify", {"allowUnanchored": True})
    assert verified["allowUnanchored"] is True
    assert isinstance(verified["reasons"], list)


# -- record ----------------------------------------------------------------------------------------


def test_a_no_through_record_keeps_its_decline_reason(sidecar: Sidecar, project: Path) -> None:
    params = call(project, confirmed=False, declineReason="timeout", toolCallId="call-6")
    recorded = result(sidecar, "record", params)
    assert recorded["decision"] == "declined"
    assert recorded["reasons"] == ["timeout"]
    assert isinstance(recorded["reasons"], list)
    (data,) = records(sidecar.home, "confirmation.declined")
    assert data["reason"] == "timeout"
    assert data["toolCallId"] == "call-6"


# -- audit.declined and audit.toolExecuted ---------------------------------------------------------


def test_a_decline_is_audited_with_its_call_id_and_told_in_full(
    sidecar: Sidecar, project: Path
) -> None:
    command = "rm -rf build " + " ".join(f"arg{i}" for i in range(60))
    params = call(project, command, reason="declined", toolCallId="call-5", operatorReason="no")
    declined = result(sidecar, "audit.declined", params)
    assert declined["record"]["decision"] == "declined"
    assert declined["record"]["reasons"] == ["declined"]
    assert declined["blockReason"].startswith(
        'operator-guard blocked this destructive bash call: the operator declined it, saying: "no".'
    )
    # The whole command (head and tail), not only the evaluation's short preview.
    assert "arg58 arg59." in declined["blockReason"]
    (data,) = records(sidecar.home, "confirmation.declined")
    assert data["toolCallId"] == "call-5"
    assert data["reason"] == "declined"
    assert data["operatorReason"] == "no"


def test_a_tool_result_keeps_its_error_flag_and_evidence_id(
    sidecar: Sidecar, project: Path
) -> None:
    params = call(project, toolCallId="call-9", isError=True, evidenceId="ev_0123456789abcdef")
    assert result(sidecar, "audit.toolExecuted", params) == {"audited": True}
    (data,) = records(sidecar.home, "tool.executed")
    assert data["toolCallId"] == "call-9"
    assert data["isError"] is True
    assert data["evidenceId"] == "ev_0123456789abcdef"


# -- consume ---------------------------------------------------------------------------------------


def test_the_guard_refuses_evidence_bound_to_another_call(sidecar: Sidecar, project: Path) -> None:
    envelope = result(sidecar, "record", call(project, confirmed=True, toolCallId="call-1"))[
        "envelope"
    ]
    other = result(sidecar, "consume", call(project, envelope=envelope, toolCallId="call-2"))
    assert other["decision"] == "rejected"
    assert isinstance(other["reasons"], list)
    assert "tool-call-id-mismatch" in other["reasons"]
    own = result(sidecar, "consume", call(project, envelope=envelope, toolCallId="call-1"))
    assert own["decision"] == "consumed"


def test_an_unreadable_session_file_is_named_cut_to_300_characters_with_the_os_words(
    sidecar: Sidecar, project: Path, tmp_path: Path
) -> None:
    path = str(tmp_path / "sessions" / ("x" * 400))
    refused = error(sidecar, "consume", call(project, sessionFile=path))
    assert refused == {
        "code": RpcCode.BAD_INPUT,
        "message": "session file unreadable",
        "data": {
            "reason": "session-file-unreadable",
            "path": path[:300],
            "error": "No such file or directory",
        },
    }
    nul = error(sidecar, "consume", call(project, sessionFile="a\x00b.jsonl"))
    assert nul["data"]["error"] == "embedded null byte"


def test_a_monitor_without_a_keyring_refuses_consume_naming_home_and_error(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "empty"
    monitor = Sidecar(home, verify_only=True)
    try:
        refused = error(monitor, "consume", call(project, envelope={}))
    finally:
        monitor.close()
    assert refused == {
        "code": RpcCode.GUARD_UNAVAILABLE,
        "message": "Guard unavailable",
        "data": {
            "reason": "keyring-open-failed",
            "home": str(home),
            "error": f"KeyringError: keyring: file not found ({home / 'keyring.json'})",
        },
    }


# -- consume in verify-only mode: the monitor ------------------------------------------------------


def test_a_monitor_refuses_evidence_bound_to_another_call(
    tmp_path: Path, sidecar: Sidecar, project: Path, logs: Logs
) -> None:
    envelope = result(sidecar, "record", call(project, confirmed=True, toolCallId="call-1"))[
        "envelope"
    ]
    monitor = Sidecar(monitor_home(tmp_path, sidecar.home), verify_only=True)
    try:
        other = result(monitor, "consume", call(project, envelope=envelope, toolCallId="call-2"))
        assert other["decision"] == "rejected"
        assert "tool-call-id-mismatch" in other["reasons"]
        own = result(monitor, "consume", call(project, envelope=envelope, toolCallId="call-1"))
        assert own["decision"] == "consumed"
    finally:
        monitor.close()
    told = [e for e in logs if e["event"] == "monitor-consume"]
    assert [(e["decision"], e["evidence_id"]) for e in told] == [
        ("rejected", envelope["details"]["evidenceId"]),
        ("consumed", envelope["details"]["evidenceId"]),
    ]
    assert "tool-call-id-mismatch" in told[0]["reasons"]
    assert told[1]["reasons"] == []


def test_a_monitor_trusts_no_audit_log_its_keyring_did_not_sign(
    tmp_path: Path, sidecar: Sidecar, project: Path
) -> None:
    envelope = result(sidecar, "record", call(project, confirmed=True))["envelope"]
    # Another guard's log, intact in itself, lies in the monitor's home.
    stranger = Sidecar(tmp_path / "stranger")
    try:
        result(stranger, "record", call(project, "rm -rf dist", confirmed=True))
    finally:
        stranger.close()
    home = monitor_home(tmp_path, sidecar.home)
    (home / "audit.jsonl").write_bytes((tmp_path / "stranger" / "audit.jsonl").read_bytes())
    monitor = Sidecar(home, verify_only=True)
    try:
        refused = error(monitor, "consume", call(project, envelope=envelope))
    finally:
        monitor.close()
    assert refused["code"] == RpcCode.GUARD_ERROR
    assert "consumption refused" in refused["message"]


def test_a_monitor_opens_before_its_postgres_ledger_answers_and_fails_closed(
    tmp_path: Path, sidecar: Sidecar, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    envelope = result(sidecar, "record", call(project, confirmed=True))["envelope"]
    monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", "postgresql://guard@127.0.0.1:1/ledger")
    monitor = Sidecar(monitor_home(tmp_path, sidecar.home), verify_only=True)
    try:
        assert result(monitor, "health")["ok"] is True
        refused = error(monitor, "consume", call(project, envelope=envelope))
    finally:
        monitor.close()
    assert refused["code"] == RpcCode.GUARD_ERROR
    assert "consumption refused" in refused["message"]


# -- audit.replay --------------------------------------------------------------------------------


def spooled(n: int, cwd: Path, at: datetime | str = NOW, **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": f"spool_{n:016d}",
        "at": at if isinstance(at, str) else format_iso(at),
        "kind": "declined",
        "reason": "sidecar-unavailable",
        "toolName": "bash",
        "input": {"command": "rm -rf build"},
        "cwd": str(cwd),
        "toolCallId": f"call-{n}",
    }
    return {**event, **fields}


def replay(server: Sidecar, *events: Any) -> dict[str, Any]:
    return server.session.replay(ReplayParams(events=list(events)))


def late(home: Path) -> list[dict[str, Any]]:
    return [r.data for r in read_records(home / "audit.jsonl") if r.data.get("deliveredLate")]


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[tuple[Sidecar, Any]]:
    """A guard opened at ``NOW`` whose clock moves only when the test says so."""
    with freeze_time(NOW) as clock:
        served = Sidecar(tmp_path / "home")
        assert served.session.home.guard is not None
        try:
            yield served, clock
        finally:
            served.close()


def test_a_rejected_event_shows_its_id_cut_to_80_characters(
    sidecar: Sidecar, project: Path
) -> None:
    long_id = "spool_" + "a" * 100
    reply = replay(sidecar, spooled(1, project, id=long_id))
    assert reply["rejected"] == [{"id": long_id[:80], "reason": "invalid: declined.id"}]


def test_a_rejected_event_names_the_field_path_dotted(sidecar: Sidecar, project: Path) -> None:
    bad = spooled(2, project, kind="executed", toolCallId="", isError=False)
    del bad["reason"]
    reply = replay(sidecar, bad)
    assert reply["rejected"] == [
        {"id": "spool_0000000000000002", "reason": "invalid: executed.toolCallId"}
    ]
    assert late(sidecar.home) == []


def test_events_up_to_the_skew_ahead_and_recent_ones_are_taken_later_ones_rejected(
    frozen: tuple[Sidecar, Any], project: Path
) -> None:
    served, _ = frozen
    edge = NOW + REPLAY_SKEW
    reply = replay(
        served,
        spooled(1, project, at=edge),
        spooled(2, project, at=edge + timedelta(milliseconds=1)),
        spooled(3, project, at=NOW - timedelta(minutes=1)),
        spooled(4, project, at=NOW),
    )
    assert reply == {
        "delivered": ["spool_0000000000000001", "spool_0000000000000003", "spool_0000000000000004"],
        "duplicates": [],
        "skipped": [],
        "rejected": [{"id": "spool_0000000000000002", "reason": "in-the-future"}],
    }
    assert [d["spoolId"] for d in late(served.home)] == [
        "spool_0000000000000001",
        "spool_0000000000000003",
        "spool_0000000000000004",
    ]


def test_an_event_from_the_edge_of_the_future_is_found_again_by_a_repeat(
    frozen: tuple[Sidecar, Any], project: Path
) -> None:
    served, _ = frozen
    event = spooled(1, project, at=NOW + REPLAY_SKEW)
    assert replay(served, event)["delivered"] == ["spool_0000000000000001"]
    again = replay(served, event)
    assert again["delivered"] == []
    assert again["duplicates"] == ["spool_0000000000000001"]
    assert len(late(served.home)) == 1


def test_a_repeat_searches_back_from_the_earliest_event_of_the_batch(
    frozen: tuple[Sidecar, Any], project: Path
) -> None:
    served, clock = frozen
    old = spooled(1, project, at=NOW - timedelta(minutes=1))
    assert replay(served, old)["delivered"] == ["spool_0000000000000001"]
    clock.tick(timedelta(hours=2))
    new = spooled(2, project, at=NOW + timedelta(hours=2))
    again = replay(served, old, new)
    assert again["delivered"] == ["spool_0000000000000002"]
    assert again["duplicates"] == ["spool_0000000000000001"]
    assert [d["spoolId"] for d in late(served.home)] == [
        "spool_0000000000000001",
        "spool_0000000000000002",
    ]


def test_an_id_twice_in_one_batch_is_logged_once(sidecar: Sidecar, project: Path) -> None:
    first = spooled(7, project, at="2026-01-02T03:04:05.678Z")
    second = spooled(7, project, at="2026-01-02T03:04:06.000Z", reason="timeout")
    reply = replay(sidecar, first, second)
    assert reply["delivered"] == ["spool_0000000000000007"]
    assert reply["duplicates"] == ["spool_0000000000000007"]
    (data,) = late(sidecar.home)
    assert data["reason"] == "sidecar-unavailable"


def test_a_late_decline_keeps_what_the_operator_said(sidecar: Sidecar, project: Path) -> None:
    event = spooled(
        8, project, at="2026-01-02T03:04:05.678Z", reason="declined", operatorReason="not today"
    )
    assert replay(sidecar, event)["delivered"] == ["spool_0000000000000008"]
    (data,) = late(sidecar.home)
    assert data["reason"] == "declined"
    assert data["operatorReason"] == "not today"
    assert data["toolCallId"] == "call-8"


def test_a_late_tool_result_keeps_its_error_flag_and_evidence_id(
    sidecar: Sidecar, project: Path
) -> None:
    event = spooled(
        9,
        project,
        at="2026-01-02T03:04:05.678Z",
        kind="executed",
        isError=True,
        evidenceId="ev_0123456789abcdef",
    )
    del event["reason"]
    assert replay(sidecar, event)["delivered"] == ["spool_0000000000000009"]
    (data,) = records(sidecar.home, "tool.executed")
    assert data["isError"] is True
    assert data["evidenceId"] == "ev_0123456789abcdef"
    assert data["deliveredLate"] is True
    assert data["occurredAtIso"] == "2026-01-02T03:04:05.678Z"
    keys = sidecar.session.home.guard.public_keyring().public_keys()  # type: ignore[union-attr]
    assert verify_log(sidecar.home / "audit.jsonl", keys).decision == "intact"


def test_a_replay_logs_how_many_events_went_where(
    sidecar: Sidecar, project: Path, logs: Logs
) -> None:
    at = "2026-01-02T03:04:05.678Z"
    replay(sidecar, spooled(1, project, at=at))
    logs.clear()
    # A decline of a call the policy now allows is skipped (a block is kept: it was one).
    allowed = spooled(
        2, project, at=at, reason="declined", toolName="read", input={"path": "README.md"}
    )
    replay(
        sidecar,
        spooled(1, project, at=at),
        spooled(3, project, at=at),
        spooled(4, project, at=at),
        allowed,
        None,
    )
    assert [e for e in logs if e["event"] == "audit-replay"] == [
        {
            "event": "audit-replay",
            "log_level": "info",
            "delivered": 2,
            "duplicates": 1,
            "skipped": 1,
            "rejected": 1,
        }
    ]


# -- sandbox.plan --------------------------------------------------------------------------------


@needs_bwrap
def test_the_sandbox_runs_the_asked_shell_and_keeps_the_extra_paths_read_only(
    sidecar: Sidecar, project: Path
) -> None:
    vendor = project / "vendor"
    vendor.mkdir()
    params = {"cwd": str(project), "shell": "/bin/sh", "extraReadOnly": [str(vendor)]}
    plan = result(sidecar, "sandbox.plan", params)
    assert plan["state"] == "sandboxed"
    argv = plan["argv"]
    assert isinstance(argv, list)
    assert argv[-3:] == ["--", "/bin/sh", "-c"]
    bound = [argv[i + 1 : i + 3] for i, arg in enumerate(argv) if arg == "--ro-bind"]
    assert [str(vendor), str(vendor)] in bound
    assert isinstance(plan["notes"], list)
    assert isinstance(plan["unsetEnv"], list)


def test_without_a_usable_home_the_plan_comes_back_without_a_notice(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text('[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    (home / "audit.jsonl").mkdir()  # the guard cannot open its log
    served = Sidecar(home)
    try:
        assert served.session.home.guard is None
        plan = result(served, "sandbox.plan", {"cwd": str(project)})
    finally:
        served.close()
    assert plan["state"] == "unavailable"
    assert plan["notice"] is None
    assert plan["audited"] is False
    assert plan["blockReason"].endswith("[reason: sandbox-unavailable]")


# -- serve -----------------------------------------------------------------------------------------


def test_serve_logs_to_stderr_never_into_the_rpc_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_OPERATOR_GUARD_LOG_LEVEL", "info")
    saved = structlog.get_config()
    was_configured = structlog.is_configured()
    structlog.reset_defaults()
    try:
        out = io.BytesIO()
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        assert serve(io.BytesIO(ping), out, home=tmp_path / "home") == 0
        configured = structlog.is_configured()
        captured = capsys.readouterr()
    finally:
        structlog.reset_defaults()
        if was_configured:
            structlog.configure(**saved)
    assert configured is True
    assert json.loads(out.getvalue()) == {"jsonrpc": "2.0", "id": 1, "result": {"pong": True}}
    assert "sidecar-started" not in captured.out
    assert "sidecar-started" in captured.err


def test_serve_logs_its_start_and_stop(tmp_path: Path, logs: Logs) -> None:
    out = io.BytesIO()
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert serve(io.BytesIO(ping), out, home=tmp_path / "home", verify_only=True) == 0
    started = [e for e in logs if e["event"] == "sidecar-started"]
    assert started == [
        {
            "event": "sidecar-started",
            "log_level": "info",
            "pid": os.getpid(),
            "home": str(tmp_path / "home"),
            "verify_only": True,
        }
    ]
    stopped = [e for e in logs if e["event"] == "sidecar-stopped"]
    assert stopped == [{"event": "sidecar-stopped", "log_level": "info", "requests": 1}]
