"""parse_plan_input: the one door from decoded JSON (CLI, sidecar, pi tool) to a planner input.

Decoding JSON text strictly is the callers' job (tests/guard/test_plan_input.py).
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from planning import (
    PLANNERS,
    ChannelPlanInput,
    PlanInput,
    PlanInputError,
    PlanningError,
    RuntimeConsumptionPlanInput,
    SignalSourcePlanInput,
    parse_plan_input,
    plan_channel,
)


def refused(planner: str, raw: Any) -> PlanInputError:
    with pytest.raises(PlanInputError) as caught:
        parse_plan_input(planner, raw)
    message = str(caught.value)
    assert "\n" not in message
    assert "\r" not in message
    return caught.value


@pytest.mark.parametrize("raw", [{}, MappingProxyType({})])
def test_empty_object_is_valid_and_means_all_defaults(raw: Any) -> None:
    assert parse_plan_input("channel", raw) == ChannelPlanInput()
    assert parse_plan_input("signal-source", raw) == SignalSourcePlanInput()
    assert parse_plan_input("runtime-consumption", raw) == RuntimeConsumptionPlanInput()


def test_documented_defaults() -> None:
    channel = ChannelPlanInput()
    assert channel.preferred_channel is None
    assert not channel.guard_can_own_dialog
    assert not channel.wrapper_can_preserve_structured_details
    assert not channel.upstream_change_accepted
    assert not channel.direct_node_modules_patch_requested
    assert not channel.destructive_runtime_enable_requested
    assert not any(SignalSourcePlanInput().model_dump().values())
    runtime = RuntimeConsumptionPlanInput().model_dump()
    assert runtime == {
        "guardOwnsConfirmationDialog": False,
        "structuredEnvelopeDetailsAvailable": False,
        "auditEntryReadableByConsumer": False,
        "customMessagesTextOnly": True,
        "upstreamToolCallHasConfirmationSignal": False,
        "destructiveOrProtectedAction": True,
    }


@pytest.mark.parametrize("planner", sorted(PLANNERS))
@pytest.mark.parametrize("key", ["bogus", "GuardCanOwnDialog", "dispatchAllowed", ""])
def test_unknown_field_is_refused_and_named(planner: str, key: str) -> None:
    error = refused(planner, {key: True})
    assert error.field == key
    assert error.planner == planner
    assert "unknown field" in str(error)
    assert repr(key) in str(error)


def test_unknown_field_in_a_mapping_is_refused_too() -> None:
    error = refused("channel", {"guardCanOwnDialog": True, "extra": 1})
    assert error.field == "extra"


def test_wrong_type_is_refused_with_field_and_value() -> None:
    for bad in ['"true"', "1", "0", "null", "[]", "{}"]:
        error = refused("signal-source", {"upstreamMutationAllowed": json.loads(bad)})
        assert error.field == "upstreamMutationAllowed"
        assert "boolean" in error.problem
    error = refused("channel", {"guardCanOwnDialog": "yes"})
    assert str(error) == (
        "channel plan input: field 'guardCanOwnDialog': Input should be a valid boolean (got 'yes')"
    )


def test_preferred_channel_accepts_exactly_the_three_channels_or_absence() -> None:
    for channel in ("guard-owned", "wrapper", "upstream-pr"):
        parsed = parse_plan_input("channel", {"preferredChannel": channel})
        assert isinstance(parsed, ChannelPlanInput)
        assert parsed.preferred_channel == channel
    for bad in ['"guard-owned-report-only"', '"Wrapper"', '""', "null", "true", "1"]:
        error = refused("channel", {"preferredChannel": json.loads(bad)})
        assert error.field == "preferredChannel"
        assert "also" not in str(error)
    error = refused("channel", {"preferredChannel": "Wrapper"})
    assert str(error) == (
        "channel plan input: field 'preferredChannel': must be one of 'guard-owned', "
        "'wrapper', 'upstream-pr' (got 'Wrapper')"
    )


def test_both_spellings_of_one_field_are_refused() -> None:
    error = refused("channel", {"guardCanOwnDialog": True, "guard_can_own_dialog": False})
    assert error.field == "guardCanOwnDialog"
    assert "given twice" in str(error)
    with pytest.raises(ValidationError):
        ChannelPlanInput.model_validate({"guardCanOwnDialog": True, "guard_can_own_dialog": True})


def test_several_faults_are_reported_on_one_line() -> None:
    error = refused("channel", {"a": 1, "b": 2, "c": 3, "d": 4, "guardCanOwnDialog": 1})
    assert error.field == "guardCanOwnDialog"
    assert "'a'" in str(error)
    assert "more" in str(error)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [([], "array"), ("x", "string"), (1, "number"), (None, "null"), (True, "boolean")],
)
def test_top_level_must_be_an_object(raw: object, kind: str) -> None:
    error = refused("runtime-consumption", raw)
    assert "must be a JSON object" in str(error)
    assert error.value == kind


@pytest.mark.parametrize("name", ["", "Channel", "plan", "signal_source", "channel "])
def test_unknown_planner_is_refused(name: str) -> None:
    error = refused(name, {})
    assert error.field == "planner"
    assert error.planner is None
    assert "channel, runtime-consumption, signal-source" in str(error)


def test_input_of_another_type_is_refused() -> None:
    # JSON text is not decoded here: text is a JSON string, not an object.
    assert refused("channel", "{}").value == "string"
    assert refused("channel", b"{}").value == "bytes"
    assert refused("channel", ["guardCanOwnDialog"]).value == "array"
    assert refused("channel", {1: True}).field == "1"


def test_a_huge_integer_is_refused_without_a_stray_value_error() -> None:
    # repr() of an int past 4300 digits raises ValueError; the message must not.
    error = refused("channel", {"guardCanOwnDialog": 10**5000})
    assert error.field == "guardCanOwnDialog"
    assert len(str(error)) < 300


def test_planner_function_refuses_the_wrong_input_model() -> None:
    with pytest.raises(PlanInputError, match="expected a ChannelPlanInput"):
        plan_channel(SignalSourcePlanInput())  # type: ignore[arg-type]
    for planner in PLANNERS.values():
        with pytest.raises(PlanInputError):
            planner.run({})


def test_errors_form_a_small_tree() -> None:
    assert issubclass(PlanInputError, PlanningError)
    assert issubclass(PlanningError, Exception)
    assert not issubclass(PlanInputError, ValueError)


def _outcome(planner: str, raw: object) -> PlanInput | PlanInputError:
    try:
        return parse_plan_input(planner, raw)
    except PlanInputError as error:
        return error


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
field_names = st.sampled_from(
    sorted(
        {
            key
            for planner in PLANNERS.values()
            for name, info in planner.input_model.model_fields.items()
            for key in (name, info.alias)
            if key is not None
        }
    )
)
objects = st.dictionaries(
    field_names | st.text(max_size=12), json_values | st.booleans(), max_size=5
)


@settings(max_examples=300, deadline=None)
@given(planner=st.sampled_from(sorted(PLANNERS)), obj=objects)
def test_arbitrary_objects_give_an_input_or_our_error(planner: str, obj: dict[str, Any]) -> None:
    outcome = _outcome(planner, obj)
    if isinstance(outcome, PlanInputError):
        assert "\n" not in str(outcome)
        assert outcome.planner == planner
    else:
        model = PLANNERS[planner].input_model
        assert isinstance(outcome, model)
        assert set(obj) <= {n for n, f in model.model_fields.items()} | {
            f.alias for f in model.model_fields.values()
        }
        assert PLANNERS[planner].run(outcome).dispatch_allowed is False
