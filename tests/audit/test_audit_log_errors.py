"""How invalid event data is reported: one line per problem, ``where: what``.

``where`` is the field's wire name, nested parts joined with ``.`` (``reasons.1``), or
``(data)`` for the data as a whole; the offending value itself is never echoed, so a
secret passed by mistake does not reach an error message or a log of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from audit import EventDataError, ReservedEventError
from audit._records.models import EVENT_MODELS
from audit._writing.events import _errors_of
from audit.log import AuditLog
from tests.audit.audit_testkit import FixedSigner, executed

SECRET = "sk-live-4f9c2e7a1b3d5f60718293a4b5c6d7e8"


def _refused(path: Path, signer: FixedSigner, event: str, data: Any) -> EventDataError:
    with AuditLog.open(path, signer, signer.keys) as log, pytest.raises(EventDataError) as err:
        log.append(event, data)
    assert len(path.read_bytes().splitlines()) == 1, "nothing but record 0 was written"
    return err.value


def _where(errors: list[str]) -> list[str]:
    return [line.split(": ", 1)[0] for line in errors]


def test_nested_problems_name_their_place_joined_with_dots(
    log_path: Path, signer: FixedSigner
) -> None:
    data = {"planner": "p", "decision": "d", "reasons": ["fine", 5, "x" * 600]}
    err = _refused(log_path, signer, "planner.reported", data)
    assert _where(err.errors) == ["reasons.1", "reasons.2"]
    assert err.errors[0] == "reasons.1: Input should be a valid string"
    assert err.errors[1].startswith("reasons.2: String should have at most 512 characters")
    assert str(err) == ("audit event 'planner.reported': invalid data: " + "; ".join(err.errors))


def test_problems_name_fields_by_their_wire_names(log_path: Path, signer: FixedSigner) -> None:
    data = {**executed("c"), "payloadHash": "md5:abc", "toolName": ""}
    err = _refused(log_path, signer, "tool.executed", data)
    assert sorted(_where(err.errors)) == ["payloadHash", "toolName"]


@pytest.mark.parametrize(
    ("event", "data", "where"),
    [
        ("tool.executed", {**executed("c"), "payloadHash": SECRET}, "payloadHash"),
        ("key.generated", {"keyId": "ed25519:" + SECRET}, "keyId"),
        ("planner.reported", {"planner": "p", "decision": "d", "reasons": SECRET}, "reasons"),
        (
            "planner.reported",
            {"planner": "p", "decision": "d", "reasons": [SECRET * 20]},
            "reasons.0",
        ),
        (
            "planner.reported",
            {"planner": "p", "decision": "d", "reasons": [], "token": SECRET},
            "token",
        ),
        ("tool.executed", {**executed("c"), "isError": SECRET}, "isError"),
    ],
)
def test_the_offending_value_is_never_echoed(
    log_path: Path, signer: FixedSigner, event: str, data: dict[str, Any], where: str
) -> None:
    err = _refused(log_path, signer, event, data)
    assert _where(err.errors) == [where]
    assert "4f9c2e7a" not in str(err)
    assert all("4f9c2e7a" not in line for line in err.errors)


def test_a_problem_with_the_data_as_a_whole_is_placed_at_data() -> None:
    # The appender only validates mappings, so this is pinned on the helper itself:
    # an error without a location (the input is not an object at all) reads "(data)".
    model = EVENT_MODELS["planner.reported"]
    with pytest.raises(ValidationError) as exc:
        model.model_validate(SECRET)
    (line,) = _errors_of(exc.value)
    assert line.startswith("(data): Input should be a valid dictionary")
    assert "4f9c2e7a" not in line


def test_data_that_is_not_a_mapping_is_refused_at_data(log_path: Path, signer: FixedSigner) -> None:
    err = _refused(log_path, signer, "planner.reported", [SECRET])
    assert err.event == "planner.reported"
    assert err.errors == ["(data): must be a mapping, not list"]
    assert str(err) == (
        "audit event 'planner.reported': invalid data: (data): must be a mapping, not list"
    )


@pytest.mark.parametrize("event", ["log.created", "log.recovered"])
def test_a_reserved_event_is_refused_by_name(
    log_path: Path, signer: FixedSigner, event: str
) -> None:
    with (
        AuditLog.open(log_path, signer, signer.keys) as log,
        pytest.raises(ReservedEventError) as err,
    ):
        log.append(event, {})
    assert err.value.event == event
    assert str(err.value) == f"audit event {event!r}: reserved for the audit log itself"
    assert len(log_path.read_bytes().splitlines()) == 1
