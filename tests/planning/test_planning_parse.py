"""parse_plan_input: the one door from raw JSON (CLI, sidecar, pi tool) to a planner input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from planning import (
    MAX_INPUT_BYTES,
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


@pytest.mark.parametrize("raw", ["{}", b"{}", " {}\n", {}])
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
    error = refused(planner, json.dumps({key: True}))
    assert error.field == key
    assert error.planner == planner
    assert "unknown field" in str(error)
    assert repr(key) in str(error)


def test_unknown_field_in_a_mapping_is_refused_too() -> None:
    error = refused("channel", {"guardCanOwnDialog": True, "extra": 1})
    assert error.field == "extra"


def test_wrong_type_is_refused_with_field_and_value() -> None:
    for bad in ['"true"', "1", "0", "null", "[]", "{}"]:
        error = refused("signal-source", '{"upstreamMutationAllowed": ' + bad + "}")
        assert error.field == "upstreamMutationAllowed"
        assert "boolean" in error.problem
    error = refused("channel", '{"guardCanOwnDialog": "yes"}')
    assert str(error) == (
        "channel plan input: field 'guardCanOwnDialog': Input should be a valid boolean (got 'yes')"
    )


def test_preferred_channel_accepts_exactly_the_three_channels_or_absence() -> None:
    for channel in ("guard-owned", "wrapper", "upstream-pr"):
        parsed = parse_plan_input("channel", json.dumps({"preferredChannel": channel}))
        assert isinstance(parsed, ChannelPlanInput)
        assert parsed.preferred_channel == channel
    for bad in ['"guard-owned-report-only"', '"Wrapper"', '""', "null", "true", "1"]:
        error = refused("channel", '{"preferredChannel": ' + bad + "}")
        assert error.field == "preferredChannel"
        assert "also" not in str(error)
    error = refused("channel", '{"preferredChannel": "Wrapper"}')
    assert str(error) == (
        "channel plan input: field 'preferredChannel': must be one of 'guard-owned', "
        "'wrapper', 'upstream-pr' (got 'Wrapper')"
    )


def test_both_spellings_of_one_field_are_refused() -> None:
    error = refused("channel", '{"guardCanOwnDialog": true, "guard_can_own_dialog": false}')
    assert error.field == "guardCanOwnDialog"
    assert "given twice" in str(error)
    with pytest.raises(ValidationError):
        ChannelPlanInput.model_validate({"guardCanOwnDialog": True, "guard_can_own_dialog": True})


def test_several_faults_are_reported_on_one_line() -> None:
    error = refused("channel", '{"a": 1, "b": 2, "c": 3, "d": 4, "guardCanOwnDialog": 1}')
    assert error.field == "guardCanOwnDialog"
    assert "'a'" in str(error)
    assert "more" in str(error)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"guardCanOwnDialog": true, "guardCanOwnDialog": false}', "duplicate key"),
        ('{"x": NaN}', "NaN and Infinity"),
        ('{"x": Infinity}', "NaN and Infinity"),
        ('{"x": -Infinity}', "NaN and Infinity"),
        ('{"x": 1e400}', "out of range"),
        ('{"x": ' + "9" * 5000 + "}", "number too long"),
        ('{"x": 1', "not valid JSON"),
        ("", "not valid JSON"),
        ("\ufeff{}", "not valid JSON"),
        ("[" * 100_000, "larger than"),
        ("[" * 30_000 + "]" * 30_000, "nested too deeply"),
        ("{} {}", "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
    ],
)
def test_malformed_json_is_refused(raw: str, problem: str) -> None:
    assert problem in str(refused("channel", raw))


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("[]", "array"), ('"x"', "string"), ("1", "number"), ("null", "null"), ("true", "boolean")],
)
def test_top_level_must_be_an_object(raw: str, kind: str) -> None:
    error = refused("runtime-consumption", raw)
    assert "must be a JSON object" in str(error)
    assert error.value == kind


def test_bytes_must_be_utf8() -> None:
    assert "not valid UTF-8" in str(refused("channel", b'{"a": "\xff"}'))
    assert "not valid UTF-8" in str(refused("channel", b"\xfe\xff{}"))
    assert "lone surrogate" in str(refused("channel", '{"a": "\ud800"}'))
    parsed = parse_plan_input("channel", b'{"preferredChannel": "wrapper"}')
    assert isinstance(parsed, ChannelPlanInput)


def test_size_limit_is_64_kib_in_utf8_bytes() -> None:
    at_limit = "{" + " " * (MAX_INPUT_BYTES - 2) + "}"
    assert parse_plan_input("channel", at_limit) == ChannelPlanInput()
    assert parse_plan_input("channel", at_limit.encode()) == ChannelPlanInput()
    over = "{" + " " * (MAX_INPUT_BYTES - 1) + "}"
    assert "larger than 65536 bytes" in str(refused("channel", over))
    assert "larger than" in str(refused("channel", over.encode()))
    # Under the limit in code points, over it in UTF-8 bytes.
    wide = '{"x": "' + "é" * (MAX_INPUT_BYTES // 2) + '"}'
    assert len(wide) < MAX_INPUT_BYTES
    assert "larger than" in str(refused("channel", wide))


@pytest.mark.parametrize("name", ["", "Channel", "plan", "signal_source", "channel "])
def test_unknown_planner_is_refused(name: str) -> None:
    error = refused(name, "{}")
    assert error.field == "planner"
    assert error.planner is None
    assert "channel, runtime-consumption, signal-source" in str(error)


def test_input_of_another_type_is_refused() -> None:
    assert "JSON text or a mapping" in str(refused("channel", 42))
    assert "JSON text or a mapping" in str(refused("channel", ["guardCanOwnDialog"]))
    assert refused("channel", {1: True}).field == "1"


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


def _outcome(planner: str, raw: str | bytes) -> PlanInput | PlanInputError:
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


@settings(max_examples=300, deadline=None)
@given(planner=st.sampled_from(sorted(PLANNERS)), obj=objects)
def test_arbitrary_objects_give_an_input_or_our_error(planner: str, obj: dict[str, Any]) -> None:
    outcome = _outcome(planner, json.dumps(obj))
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
