"""``filter_records`` and the renderers behind ``pi-guard audit show``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from freezegun import freeze_time

from audit import UsageError
from audit.log import AuditLog
from audit.verify import filter_records, read_records, render_records, render_records_jsonl
from audit.wire import AuditRecord
from tests.audit.audit_testkit import FixedSigner, consumed, executed, recorded

E1 = "oce_" + "1" * 22


@pytest.fixture
def records(tmp_path: Path, signer: FixedSigner) -> list[AuditRecord]:
    path = tmp_path / "audit.jsonl"
    with (
        freeze_time("2026-11-22T01:00:00Z") as clock,
        AuditLog.open(path, signer, signer.keys) as log,
    ):
        clock.tick(60)
        log.append("confirmation.recorded", recorded(E1, "c1"))
        clock.tick(60)
        log.append("evidence.consumed", consumed(E1))
        clock.tick(60)
        log.append("tool.executed", executed("c1", evidence_id=E1))
        clock.tick(60)
        log.append("tool.executed", executed("c2", tool="write", kind="protected", path="/w/x"))
    return list(read_records(path))


def _seqs(items: object) -> list[int]:
    return [r.seq for r in items]  # type: ignore[attr-defined]


def test_filters(records: list[AuditRecord]) -> None:
    assert _seqs(filter_records(records)) == [0, 1, 2, 3, 4]
    assert _seqs(filter_records(records, event="tool.executed")) == [3, 4]
    assert _seqs(filter_records(records, event="evidence.")) == [2]
    assert _seqs(filter_records(records, tool="write")) == [4]
    assert _seqs(filter_records(records, evidence_id=E1)) == [1, 2, 3]
    assert _seqs(filter_records(records, since="2026-11-22T01:02:00Z")) == [2, 3, 4]
    assert _seqs(filter_records(records, until="2026-11-22T01:02:00.000Z")) == [0, 1, 2]
    assert _seqs(
        filter_records(
            records,
            since=datetime(2026, 11, 22, 1, 2, tzinfo=UTC).astimezone(timezone(timedelta(hours=5))),
            until="2026-11-22T03:03:00+02:00",
            tool="bash",
        )
    ) == [2, 3]
    assert _seqs(filter_records(records, since="2026-11-22T01:03:00")) == [3, 4]  # naive = UTC


def test_bad_time_is_a_usage_error(records: list[AuditRecord]) -> None:
    with pytest.raises(UsageError) as err:
        list(filter_records(records, since="yesterday"))
    assert err.value.what == "since"


def test_table_for_people(records: list[AuditRecord]) -> None:
    text = render_records(records)
    lines = text.splitlines()
    assert lines[0].split() == ["SEQ", "TIME", "EVENT", "TOOL", "CALL", "DETAIL"]
    assert len(lines) == 6
    assert lines[4].split()[:5] == ["3", "2026-11-22T01:03:00.000Z", "tool.executed", "bash", "c1"]
    assert "payloadHash=sha256:" in lines[4]
    assert "isError=no" in lines[4]
    assert "evidenceId=" + E1 in lines[4]


def test_jsonl_for_machines(records: list[AuditRecord], tmp_path: Path) -> None:
    assert render_records_jsonl(records).encode() == (tmp_path / "audit.jsonl").read_bytes()
    picked = render_records_jsonl(filter_records(records, event="tool.executed"))
    assert len(picked.splitlines()) == 2


def test_a_long_tool_name_does_not_widen_every_row() -> None:
    from audit._reporting.table import render_table

    planner = "operator_confirmation_implementation_channel_plan"
    table = render_table(
        ["SEQ", "TOOL", "CALL", "DETAIL"],
        [["1", "bash", "call_1", "x"], ["2", planner, "call_2" * 10, "y"]],
    )
    _header, second, third = table.splitlines()
    assert second.index("call_1") == third.index("call_2")  # the same columns
    assert second.index("call_1") <= len("SEQ  ") + 20 + 2  # TOOL at most 20 wide
    assert "operator_confirmati…" in third
    assert planner not in table
