"""What the appender does to event data before validating it: previews and the
operator's reason are redacted and bounded, empty ones are dropped, and data that is
not a JSON object of the event's fields is refused with nothing written.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from audit import EventDataError
from audit.log import AuditLog
from tests.audit.audit_testkit import FixedSigner, declined, executed


def _append(
    path: Path, signer: FixedSigner, event: str, data: Any, *, previews: bool = True
) -> dict[str, Any]:
    with AuditLog.open(path, signer, signer.keys, previews=previews) as log:
        return log.append(event, data).data


def test_an_empty_preview_is_dropped(log_path: Path, signer: FixedSigner) -> None:
    data = _append(log_path, signer, "tool.executed", {**executed("c"), "preview": ""})
    assert "preview" not in data


def test_a_preview_is_bounded_to_120_characters(log_path: Path, signer: FixedSigner) -> None:
    long = "echo " + "word " * 100
    data = _append(log_path, signer, "tool.executed", {**executed("c"), "preview": long})
    assert len(data["preview"]) == 120
    assert data["preview"].endswith("…")
    assert data["preview"].startswith("echo word word")


def test_a_preview_that_is_not_text_is_refused(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log, pytest.raises(EventDataError) as err:
        log.append("tool.executed", {**executed("c"), "preview": 12345})
    assert [line.split(": ", 1)[0] for line in err.value.errors] == ["preview"]
    assert len(log_path.read_bytes().splitlines()) == 1


def test_without_previews_any_preview_is_dropped(log_path: Path, signer: FixedSigner) -> None:
    for preview in ("rm -rf build", 12345, ""):
        data = _append(
            log_path,
            signer,
            "tool.executed",
            {**executed("c"), "preview": preview},
            previews=False,
        )
        assert "preview" not in data


def test_an_operator_reason_that_is_not_text_is_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log, pytest.raises(EventDataError) as err:
        log.append("confirmation.declined", {**declined("c"), "operatorReason": 7})
    assert [line.split(": ", 1)[0] for line in err.value.errors] == ["operatorReason"]


def test_an_operator_reason_is_kept_redacted(log_path: Path, signer: FixedSigner) -> None:
    said = "not now TOKEN=abc123secret"
    data = _append(
        log_path, signer, "confirmation.declined", {**declined("c"), "operatorReason": said}
    )
    assert data["operatorReason"] == "not now TOKEN=[REDACTED]"


def test_any_mapping_is_accepted_and_tuples_become_lists(
    log_path: Path, signer: FixedSigner
) -> None:
    data = _append(
        log_path,
        signer,
        "planner.reported",
        MappingProxyType({"planner": "p", "decision": "d", "reasons": ("a", "b")}),
    )
    assert data == {"planner": "p", "decision": "d", "reasons": ["a", "b"]}
