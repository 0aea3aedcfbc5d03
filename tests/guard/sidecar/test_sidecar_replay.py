"""``audit.replay``: the shim's spooled events are validated one by one, logged once, marked late."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records, verify_log
from guard._sidecar.handlers.methods import Sidecar
from guard._sidecar.wire import ReplayParams


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    served = Sidecar(tmp_path / "home")
    assert served.session.home.guard is not None
    yield served
    served.close()


def _event(n: int, cwd: Path, **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": f"spool_{n:016d}",
        "at": "2026-01-02T03:04:05.678Z",
        "kind": "declined",
        "reason": "confirmed-unrecorded",
        "toolName": "bash",
        "input": {"command": "rm -rf build"},
        "cwd": str(cwd),
        "toolCallId": f"call-{n}",
    }
    return {**event, **fields}


def _late(sidecar: Sidecar) -> list[dict[str, Any]]:
    log = sidecar.home / "audit.jsonl"
    return [r.data for r in read_records(log) if r.data.get("deliveredLate")]


def _replay(sidecar: Sidecar, *events: Any) -> dict[str, Any]:
    return sidecar.session.replay(ReplayParams(events=list(events)))


def test_a_spooled_yes_is_logged_late_with_its_own_time(sidecar: Sidecar, tmp_path: Path) -> None:
    reply = _replay(sidecar, _event(1, tmp_path))
    assert reply == {
        "delivered": ["spool_0000000000000001"],
        "duplicates": [],
        "skipped": [],
        "rejected": [],
    }
    (data,) = _late(sidecar)
    assert data["reason"] == "confirmed-unrecorded"
    assert data["deliveredLate"] is True
    assert data["spoolId"] == "spool_0000000000000001"
    assert data["occurredAtIso"] == "2026-01-02T03:04:05.678Z"
    assert data["toolCallId"] == "call-1"
    assert data["payloadHash"].startswith("sha256:")  # computed by the guard, not the shim
    keys = sidecar.session.home.guard.public_keyring().public_keys()  # type: ignore[union-attr]
    assert verify_log(sidecar.home / "audit.jsonl", keys).decision == "intact"


def test_a_replay_is_idempotent(sidecar: Sidecar, tmp_path: Path) -> None:
    events = [_event(1, tmp_path), _event(2, tmp_path, reason="sidecar-unavailable")]
    assert len(_replay(sidecar, *events)["delivered"]) == 2
    again = _replay(sidecar, *events, _event(2, tmp_path))
    assert again["delivered"] == []
    ids = ["spool_0000000000000001", "spool_0000000000000002", "spool_0000000000000002"]
    assert again["duplicates"] == ids
    assert len(_late(sidecar)) == 2


def test_a_spooled_tool_result_is_logged_late(sidecar: Sidecar, tmp_path: Path) -> None:
    event = _event(3, tmp_path, kind="executed", isError=False)
    del event["reason"]
    assert _replay(sidecar, event)["delivered"] == ["spool_0000000000000003"]
    (data,) = _late(sidecar)
    assert data["toolCallId"] == "call-3"
    assert data["isError"] is False
    assert data["actionKind"] == "destructive"


@pytest.mark.parametrize(
    "change",
    [
        {"id": "spool_short"},
        {"id": "x" * 30},
        {"at": "yesterday"},
        {"at": "2026-01-02T03:04:05Z"},
        {"kind": "recorded"},
        {"reason": "blocked-by-policy"},
        {"input": "rm -rf build"},
        {"extra": 1},
        {"toolName": ""},
        {"at": "2999-01-01T00:00:00.000Z"},
    ],
)
def test_an_invalid_event_is_rejected_alone(
    sidecar: Sidecar, tmp_path: Path, change: dict[str, Any]
) -> None:
    bad = _event(4, tmp_path, **change)
    reply = _replay(sidecar, bad, _event(5, tmp_path), 7, None)
    assert reply["delivered"] == ["spool_0000000000000005"]
    assert len(reply["rejected"]) == 3
    assert reply["rejected"][1:] == [{"id": None, "reason": "invalid: event"}] * 2
    assert [d["spoolId"] for d in _late(sidecar)] == ["spool_0000000000000005"]


def test_a_call_the_policy_allows_is_skipped(sidecar: Sidecar, tmp_path: Path) -> None:
    event = _event(6, tmp_path, toolName="read", input={"path": "README.md"})
    assert _replay(sidecar, event)["skipped"] == ["spool_0000000000000006"]
    assert _late(sidecar) == []


def test_replay_needs_a_usable_home(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("not a directory\n")
    served = Sidecar(tmp_path / "home")
    with pytest.raises(Exception, match="Guard unavailable"):
        _replay(served, _event(1, tmp_path))
    served.close()
