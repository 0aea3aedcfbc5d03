"""Planner input as JSON text: decoded strictly by the guard, then validated by planning."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._facade.plan import plan_input
from planning import MAX_INPUT_BYTES, PLANNERS, ChannelPlanInput, PlanInput, PlanInputError


def refused(planner: str, raw: Any) -> PlanInputError:
    with pytest.raises(PlanInputError) as caught:
        plan_input(planner, raw)
    message = str(caught.value)
    assert "\n" not in message
    assert "\r" not in message
    return caught.value


@pytest.mark.parametrize("raw", ["{}", b"{}", " {}\n", {}])
def test_text_bytes_and_mappings_are_accepted(raw: Any) -> None:
    assert plan_input("channel", raw) == ChannelPlanInput()


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"guardCanOwnDialog": true, "guardCanOwnDialog": false}', "duplicate key"),
        ('{"x": NaN}', "NaN and Infinity"),
        ('{"x": Infinity}', "NaN and Infinity"),
        ('{"x": -Infinity}', "NaN and Infinity"),
        ('{"x": 1e400}', "out of range"),
        ('{"x": ' + "9" * 5000 + "}", "number longer than 400 digits"),
        ('{"x": 1', "not valid JSON"),
        ("", "not valid JSON"),
        ("\ufeff{}", "not valid JSON"),
        ("[" * 100_000, "larger than"),
        ("[" * 30_000 + "]" * 30_000, "nested too deeply"),
        ("{} {}", "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
    ],
    ids=lambda value: value[:40] if isinstance(value, str) else None,
)
def test_malformed_json_is_refused(raw: str, problem: str) -> None:
    error = refused("channel", raw)
    assert problem in str(error)
    assert error.planner == "channel"


def test_bytes_must_be_utf8() -> None:
    assert "not valid UTF-8" in str(refused("channel", b'{"a": "\xff"}'))
    assert "not valid UTF-8" in str(refused("channel", b"\xfe\xff{}"))
    assert "lone surrogate" in str(refused("channel", '{"a": "\ud800"}'))
    parsed = plan_input("channel", b'{"preferredChannel": "wrapper"}')
    assert isinstance(parsed, ChannelPlanInput)


def test_size_limit_is_64_kib_in_utf8_bytes() -> None:
    at_limit = "{" + " " * (MAX_INPUT_BYTES - 2) + "}"
    assert plan_input("channel", at_limit) == ChannelPlanInput()
    assert plan_input("channel", at_limit.encode()) == ChannelPlanInput()
    over = "{" + " " * (MAX_INPUT_BYTES - 1) + "}"
    assert "larger than 65536 bytes" in str(refused("channel", over))
    assert "larger than" in str(refused("channel", over.encode()))
    # Under the limit in code points, over it in UTF-8 bytes.
    wide = '{"x": "' + "é" * (MAX_INPUT_BYTES // 2) + '"}'
    assert len(wide) < MAX_INPUT_BYTES
    assert "larger than" in str(refused("channel", wide))


@pytest.mark.parametrize(("raw", "kind"), [("[]", "array"), ('"x"', "string"), ("null", "null")])
def test_top_level_must_be_an_object(raw: str, kind: str) -> None:
    error = refused("runtime-consumption", raw)
    assert "must be a JSON object" in str(error)
    assert error.value == kind


def test_unknown_planner_with_bad_json_names_no_planner() -> None:
    assert refused("nope", "{").planner is None
    assert refused("nope", "{}").field == "planner"


def _outcome(planner: str, raw: str | bytes) -> PlanInput | PlanInputError:
    try:
        return plan_input(planner, raw)
    except PlanInputError as error:
        return error


@settings(max_examples=200, deadline=None)
@given(
    planner=st.sampled_from(sorted(PLANNERS)), raw=st.text(max_size=200) | st.binary(max_size=200)
)
def test_arbitrary_text_gives_an_input_or_our_error(planner: str, raw: str | bytes) -> None:
    outcome = _outcome(planner, raw)
    if isinstance(outcome, PlanInputError):
        assert "\n" not in str(outcome)
    else:
        assert isinstance(outcome, PLANNERS[planner].input_model)
