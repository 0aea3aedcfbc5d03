"""Record and event models: wire shape, schemas, and round trips through canonical JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.log import AuditLog
from audit.verify import read_records
from audit.wire import (
    EVENT_MODELS,
    KNOWN_EVENTS,
    RESERVED_EVENTS,
    AuditRecord,
    ToolExecutedData,
    canonical_json,
)
from tests.audit.audit_testkit import FixedSigner, executed

texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def test_known_events_are_explicit() -> None:
    assert sorted(KNOWN_EVENTS) == [
        "approval.refused",
        "confirmation.declined",
        "confirmation.recorded",
        "confirmation.requested",
        "effects.resolved",
        "effects.reviewed",
        "evidence.consumed",
        "evidence.rejected",
        "grant.created",
        "grant.expired",
        "grant.revoked",
        "grant.used",
        "key.generated",
        "key.retired",
        "key.rotated",
        "log.created",
        "log.recovered",
        "network.refused",
        "operator.enrolled",
        "operator.removed",
        "planner.reported",
        "session.ended",
        "session.started",
        "tool.executed",
    ]
    assert {"log.created", "log.recovered"} == RESERVED_EVENTS


@pytest.mark.parametrize("event", sorted(EVENT_MODELS))
def test_every_event_schema_is_generated_camel_case_and_closed(event: str) -> None:
    schema = EVENT_MODELS[event].model_json_schema(by_alias=True)
    assert schema["additionalProperties"] is False
    for name in schema["properties"]:
        assert "_" not in name, name


def test_record_schema_and_wire_names() -> None:
    schema = AuditRecord.model_json_schema()
    assert set(schema["properties"]) == {"seq", "ts", "event", "data", "prev", "hash"}
    assert set(schema["required"]) == {"seq", "ts", "event", "data", "prev", "hash"}
    data = ToolExecutedData.model_validate(executed("c"))
    assert data.model_dump(mode="json", exclude_none=True) == executed("c")


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_json_values_round_trip_through_canonical_json(value: Any) -> None:
    once = canonical_json(value)
    assert canonical_json(json.loads(once)) == once
    assert json.loads(once) == value


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    planner=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=30),
    reasons=st.lists(
        st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=60),
        max_size=5,
    ),
    call=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=40),
)
def test_arbitrary_event_data_round_trips_through_the_log(
    tmp_path: Path, signer: FixedSigner, planner: str, reasons: list[str], call: str
) -> None:
    path = tmp_path / "rt.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        a = log.append(
            "planner.reported", {"planner": planner, "decision": "d", "reasons": reasons}
        )
        b = log.append("tool.executed", executed(call))
    back = list(read_records(path))[-2:]
    assert back == [a, b]
    assert back[0].data["reasons"] == reasons
    assert back[1].data["toolCallId"] == call
    # every line is exactly the canonical JSON of its record, and LF never appears inside
    for line in path.read_bytes().splitlines(keepends=True):
        assert line.count(b"\n") == 1
        assert canonical_json(json.loads(line)) + b"\n" == line
