"""``build_report``: every destructive/protected execution is auditable or an audit gap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.log import AuditLog
from audit.verify import AuditReport, build_report, read_records, render_report
from tests.audit.audit_testkit import (
    FixedSigner,
    consumed,
    declined,
    executed,
    recorded,
    rejected,
)

Events = list[tuple[str, dict[str, Any]]]


def _report(tmp_path: Path, signer: FixedSigner, events: Events) -> AuditReport:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        for event, data in events:
            log.append(event, data)
    return build_report(read_records(path))


def _row(report: AuditReport, call: str) -> tuple[str, str | None, str | None, str | None]:
    (row,) = [r for r in report.rows if r.tool_call_id == call]
    return row.classification, row.reason, row.evidence_id, row.consumption


E1 = "oce_" + "1" * 22
E2 = "oce_" + "2" * 22


def test_confirmed_and_consumed_execution_is_auditable(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, "c1")),
            ("evidence.consumed", consumed(E1)),
            ("tool.executed", executed("c1", evidence_id=E1)),
        ],
    )
    assert _row(report, "c1") == ("auditable", None, E1, "consumed")
    assert report.decision == "no-gaps"
    assert report.exit_code == 0


def test_consumption_after_the_execution_still_counts(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, "c1")),
            ("tool.executed", executed("c1")),
            ("evidence.consumed", consumed(E1)),
            ("confirmation.recorded", recorded(E2, "c2")),
            ("tool.executed", executed("c2")),
        ],
    )
    assert _row(report, "c1") == ("auditable", None, E1, "consumed")
    assert _row(report, "c2") == ("auditable", None, E2, "not-consumed")
    assert (report.summary.consumed, report.summary.not_consumed) == (1, 1)


def test_no_evidence(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(tmp_path, signer, [("tool.executed", executed("c1"))])
    assert _row(report, "c1") == ("audit-gap", "no-evidence", None, None)
    assert report.decision == "gaps"
    assert report.exit_code == 5


def test_evidence_recorded_after_the_execution_does_not_count(
    tmp_path: Path, signer: FixedSigner
) -> None:
    report = _report(
        tmp_path,
        signer,
        [("tool.executed", executed("c1")), ("confirmation.recorded", recorded(E1, "c1"))],
    )
    assert _row(report, "c1") == ("audit-gap", "no-evidence", None, None)


def test_input_changed_after_confirmation(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, "c1", "rm -rf build")),
            ("evidence.consumed", consumed(E1)),
            ("tool.executed", executed("c1", "rm -rf /")),
            ("confirmation.recorded", recorded(E2, "c2", path="/w/a")),
            ("tool.executed", executed("c2", path="/w/b")),
        ],
    )
    assert _row(report, "c1") == ("audit-gap", "input-changed-after-confirmation", E1, None)
    assert _row(report, "c2") == ("audit-gap", "input-changed-after-confirmation", E2, None)


def test_declined_and_rejected(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.declined", declined("c1", reason="timeout")),
            ("tool.executed", executed("c1")),
            ("evidence.rejected", rejected("c2")),
            ("tool.executed", executed("c2")),
            ("confirmation.declined", declined("c3")),
            ("evidence.rejected", rejected("c3", decision="expired")),
            ("tool.executed", executed("c3")),
        ],
    )
    assert _row(report, "c1") == ("audit-gap", "evidence-declined", None, None)
    assert _row(report, "c2") == ("audit-gap", "evidence-rejected", None, None)
    assert _row(report, "c3") == ("audit-gap", "evidence-rejected", None, None)
    assert report.summary.gaps_by_reason == {
        "no-evidence": 0,
        "evidence-declined": 1,
        "evidence-rejected": 2,
        "input-changed-after-confirmation": 0,
        "guard-absent": 0,
    }


def test_evidence_without_a_call_id_matches_by_fingerprint_once(
    tmp_path: Path, signer: FixedSigner
) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, None)),
            ("tool.executed", executed("c1")),
            ("tool.executed", executed("c2")),  # same fingerprint, evidence already used
            ("confirmation.recorded", recorded(E2, None, "other")),
            ("tool.executed", executed("c3")),  # different fingerprint
            ("evidence.rejected", rejected(None, "x")),
            ("tool.executed", executed("c4", "x")),
            ("tool.executed", executed("c5", "x")),  # the rejection explained c4 only
        ],
    )
    assert _row(report, "c1") == ("auditable", None, E1, "not-consumed")
    assert _row(report, "c2") == ("audit-gap", "no-evidence", None, None)
    assert _row(report, "c3") == ("audit-gap", "no-evidence", None, None)
    assert _row(report, "c4") == ("audit-gap", "evidence-rejected", None, None)
    assert _row(report, "c5") == ("audit-gap", "no-evidence", None, None)


def test_evidence_bound_to_another_call_does_not_count(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [("confirmation.recorded", recorded(E1, "other-call")), ("tool.executed", executed("c1"))],
    )
    assert _row(report, "c1") == ("audit-gap", "no-evidence", None, None)


def test_local_safe_and_other_events_are_ignored(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("key.generated", {"keyId": signer.key_id}),
            ("tool.executed", executed("c1", kind="local-safe")),
            ("planner.reported", {"planner": "channel", "decision": "blocked", "reasons": []}),
        ],
    )
    assert report.rows == ()
    assert report.decision == "no-gaps"
    assert "(no destructive or protected executions)" in render_report(report)


def test_report_json_and_table(tmp_path: Path, signer: FixedSigner) -> None:
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, "c1", kind="protected", path="/w/.env")),
            ("tool.executed", executed("c1", kind="protected", path="/w/.env")),
            ("tool.executed", executed("c2\x1b[2J")),
        ],
    )
    wire = json.loads(report.model_dump_json())
    assert wire["decision"] == "gaps"
    assert wire["summary"]["auditGaps"] == 1
    assert wire["rows"][0]["toolCallId"] == "c1"
    assert wire["rows"][0]["payloadHash"].startswith("sha256:")
    assert AuditReport.model_validate_json(report.model_dump_json()) == report
    text = render_report(report, wide=True)
    assert "audit gaps: 1" in text
    assert "no-evidence: 1" in text
    assert "\x1b" not in text
    assert "c2\\u001b[2J" in text
    compact = render_report(report)
    assert "GAP no-evidence" in compact and "\x1b" not in compact
    assert max(len(line) for line in compact.splitlines()) <= 120
    assert next(line for line in compact.splitlines() if line.startswith("SEQ")).split() == [
        "SEQ", "TIME", "TOOL", "KIND", "RESULT", "EVIDENCE", "WHAT"
    ]  # fmt: skip
    header = next(line for line in text.splitlines() if line.startswith("SEQ"))
    assert header.split() == [
        "SEQ",
        "TIME",
        "TOOL",
        "CALL",
        "KIND",
        "CLASS",
        "REASON",
        "EVIDENCE",
        "CONSUMPTION",
        "ERROR",
        "PAYLOAD",
        "WHAT",
    ]


@pytest.mark.parametrize("event", ["tool.executed", "confirmation.recorded"])
def test_a_record_that_does_not_fit_its_model_is_an_error(
    event: str, tmp_path: Path, signer: FixedSigner
) -> None:
    from audit import RecordDataError
    from audit.wire import AuditRecord

    record = AuditRecord(
        seq=3,
        ts="2026-11-22T01:00:00.000Z",
        event=event,
        data={"bogus": 1},
        prev="sha256:" + "0" * 64,
        hash="sha256:" + "1" * 64,
    )
    with pytest.raises(RecordDataError) as err:
        build_report([record])
    assert err.value.seq == 3


def test_calls_that_did_not_run_are_counted_and_listed(tmp_path: Path, signer: FixedSigner) -> None:
    late = {
        "deliveredLate": True,
        "spoolId": "spool_" + "0" * 16,
        "occurredAtIso": "2026-01-02T03:04:05.678Z",
    }
    report = _report(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", recorded(E1, "c1")),
            ("tool.executed", executed("c1", evidence_id=E1)),
            ("confirmation.declined", declined("c2")),
            ("confirmation.declined", declined("c3", reason="timeout")),
            ("confirmation.declined", declined("c4", reason="blocked-by-policy")),
            ("confirmation.declined", declined("c5", reason="no-ui")),
            ("confirmation.declined", {**declined("c6", reason="confirmed-unrecorded"), **late}),
            ("confirmation.declined", {**declined("c7", reason="sidecar-unavailable"), **late}),
        ],
    )
    s = report.summary
    assert (s.executions, s.confirmations, s.declined, s.blocked) == (1, 1, 2, 4)
    assert s.blocked_by_reason == {
        "blocked-by-policy": 1,
        "confirmed-unrecorded": 1,
        "no-ui": 1,
        "sidecar-unavailable": 1,
    }
    assert s.delivered_late == 2
    assert report.decision == "no-gaps"  # a call that did not run is no gap
    assert [(r.tool_call_id, r.outcome, r.delivered_late) for r in report.stopped] == [
        ("c2", "declined", False),
        ("c3", "declined", False),
        ("c4", "blocked", False),
        ("c5", "blocked", False),
        ("c6", "blocked", True),
        ("c7", "blocked", True),
    ]
    text = render_report(report, wide=True)
    assert "blocked: sidecar-unavailable (late)" in render_report(report)
    assert "declined by the operator (did not run): 2" in text
    assert "blocked by the guard (did not run): 4" in text
    assert "confirmed-unrecorded: 1" in text
    assert "delivered late (after a sidecar restart): 2" in text
    assert "calls that did not run:" in text
    assert "yes (2026-01-02T03:04:05.678Z)" in text
    dumped = json.loads(report.model_dump_json(by_alias=True))
    assert dumped["summary"]["blockedByReason"]["no-ui"] == 1
    assert dumped["stopped"][4]["deliveredLate"] is True
