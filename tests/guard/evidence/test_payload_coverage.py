"""The payload hash covers every field of the tool input, not just ``command`` or ``path``.

Evidence the operator confirmed for ``write .env`` with content A must not consume for content
B: each case below records a "yes" for one input and consumes with one field changed, through
the facade (evaluate → fingerprint → check_and_consume), and expects ``payload-hash-mismatch``;
the evidence then still consumes for the input it was minted for.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from guard import Guard
from guard.evidence import payload_hash

WRITE = ("write", {"path": ".env", "content": "TOKEN=a"})
EDIT = ("edit", {"path": ".env", "edits": [{"oldText": "TOKEN=a", "newText": "TOKEN=b"}]})
EDIT_LEGACY = ("edit", {"path": ".env", "oldText": "TOKEN=a", "newText": "TOKEN=b"})
BASH = ("bash", {"command": "rm -rf build", "timeout": 10})


def _set(value: dict[str, Any], path: tuple[Any, ...], new: Any) -> dict[str, Any]:
    changed = copy.deepcopy(value)
    target: Any = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return changed


def _drop(value: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


VARIANTS = [
    pytest.param(WRITE, _set(WRITE[1], ("content",), "TOKEN=b"), id="write-content"),
    pytest.param(WRITE, _set(WRITE[1], ("content",), "TOKEN=a\n"), id="write-content-newline"),
    pytest.param(WRITE, {**WRITE[1], "mode": "append"}, id="write-extra-field"),
    pytest.param(WRITE, _drop(WRITE[1], "content"), id="write-no-content"),
    pytest.param(EDIT, _set(EDIT[1], ("edits", 0, "oldText"), "TOKEN=x"), id="edit-oldText"),
    pytest.param(EDIT, _set(EDIT[1], ("edits", 0, "newText"), "TOKEN=x"), id="edit-newText"),
    pytest.param(
        EDIT,
        {**EDIT[1], "edits": [*EDIT[1]["edits"], {"oldText": "B=1", "newText": "B=2"}]},
        id="edit-one-more-edit",
    ),
    pytest.param(EDIT, {**EDIT[1], "edits": []}, id="edit-no-edits"),
    pytest.param(
        (
            "edit",
            {
                "path": ".env",
                "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}],
            },
        ),
        {
            "path": ".env",
            "edits": [{"oldText": "c", "newText": "d"}, {"oldText": "a", "newText": "b"}],
        },
        id="edit-order-of-edits",
    ),
    pytest.param(EDIT_LEGACY, _set(EDIT_LEGACY[1], ("oldText",), "TOKEN=x"), id="edit-legacy-old"),
    pytest.param(EDIT_LEGACY, _set(EDIT_LEGACY[1], ("newText",), "TOKEN=x"), id="edit-legacy-new"),
    pytest.param(BASH, _set(BASH[1], ("timeout",), 11), id="bash-timeout"),
    pytest.param(BASH, _drop(BASH[1], "timeout"), id="bash-no-timeout"),
    pytest.param(BASH, {**BASH[1], "timeout": "10"}, id="bash-timeout-as-text"),
    pytest.param(BASH, {**BASH[1], "description": "x"}, id="bash-extra-field"),
]


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Guard]:
    with Guard.open(tmp_path / "home") as opened:
        yield opened


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


def record_yes(g: Guard, tool: str, tool_input: dict[str, Any], project: Path) -> dict[str, Any]:
    recorded = g.record(tool, tool_input, project, confirmed=True)
    assert recorded.decision == "recorded", recorded
    assert recorded.envelope is not None
    return recorded.envelope.model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize(("confirmed", "changed"), VARIANTS)
def test_evidence_for_one_input_does_not_consume_for_another(
    g: Guard, project: Path, confirmed: tuple[str, dict[str, Any]], changed: dict[str, Any]
) -> None:
    tool, tool_input = confirmed
    assert changed != tool_input
    assert g.evaluate(tool, changed, project).requires_confirmation
    envelope = record_yes(g, tool, tool_input, project)
    other = g.consume(envelope, tool, changed, project)
    assert (other.decision, other.match.decision, other.reasons) == (
        "rejected",
        "mismatch",
        ("payload-hash-mismatch",),
    )
    assert g.consume(envelope, tool, tool_input, project).decision == "consumed"


@pytest.mark.parametrize(("confirmed", "changed"), VARIANTS)
def test_the_payload_hash_differs_for_each_changed_field(
    confirmed: tuple[str, dict[str, Any]], changed: dict[str, Any]
) -> None:
    assert payload_hash(changed) != payload_hash(confirmed[1])


def test_key_order_does_not_change_the_hash() -> None:
    tool_input = WRITE[1]
    assert payload_hash(dict(reversed(list(tool_input.items())))) == payload_hash(tool_input)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=st.text(min_size=1, max_size=10), value=_JSON)
def test_any_other_field_is_covered(g: Guard, project: Path, key: str, value: Any) -> None:
    tool, tool_input = WRITE
    assume(key not in tool_input)
    changed = {**tool_input, key: value}
    envelope = record_yes(g, tool, tool_input, project)
    other = g.consume(envelope, tool, changed, project)
    assert other.decision == "rejected"
    assert other.reasons == ("payload-hash-mismatch",)
