"""The planner registry and the one way decoded input becomes a validated planner input."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, overload

from pydantic import ValidationError

from planning._channel import ChannelPlan, ChannelPlanInput, plan_channel
from planning._errors import PlanInputError, safe_repr
from planning._runtime_consumption import (
    RuntimeConsumptionPlan,
    RuntimeConsumptionPlanInput,
    plan_runtime_consumption,
)
from planning._signal_source import SignalSourcePlan, SignalSourcePlanInput, plan_signal_source

__all__ = ["MAX_INPUT_BYTES", "PLANNERS", "PlanInput", "PlanResult", "Planner", "parse_plan_input"]

PlanInput = ChannelPlanInput | SignalSourcePlanInput | RuntimeConsumptionPlanInput
PlanResult = ChannelPlan | SignalSourcePlan | RuntimeConsumptionPlan

MAX_INPUT_BYTES = 64 * 1024
"""Largest JSON text a caller should decode for a planner, in UTF-8 bytes.

Planning itself takes decoded values (see :func:`parse_plan_input`); the CLI and the
sidecar pass this limit to their strict JSON loader.
"""

_MAX_ERRORS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Planner:
    """One planner as the CLI, the sidecar and the pi tool registration see it."""

    name: str
    """The CLI name: ``pi-guard plan <name>``."""
    description: str
    """One line saying what the planner reports."""
    tool_name: str
    """The pi tool name when the planner is registered as a read-only tool."""
    input_model: type[PlanInput]
    result_model: type[PlanResult]
    run: Callable[[Any], PlanResult]
    """The pure planner function; takes an instance of ``input_model``."""


PLANNERS: Mapping[str, Planner] = MappingProxyType(
    {
        planner.name: planner
        for planner in (
            Planner(
                name="channel",
                description=(
                    "Report which implementation channel is allowed for a structured operator "
                    "confirmation signal (guard-owned report-only, wrapper design, upstream PR "
                    "design or blocked); read-only, authorizes nothing."
                ),
                tool_name="operator_confirmation_implementation_channel_plan",
                input_model=ChannelPlanInput,
                result_model=ChannelPlan,
                run=plan_channel,
            ),
            Planner(
                name="signal-source",
                description=(
                    "Report where a structured operator confirmation signal can come from "
                    "(guard-owned audit entry, wrapper, upstream proposal or blocked); "
                    "read-only, authorizes nothing."
                ),
                tool_name="operator_confirmation_signal_source_plan",
                input_model=SignalSourcePlanInput,
                result_model=SignalSourcePlan,
                run=plan_signal_source,
            ),
            Planner(
                name="runtime-consumption",
                description=(
                    "Report whether the guard can consume structured confirmation evidence at "
                    "runtime or what it still needs; read-only, authorizes nothing."
                ),
                tool_name="operator_confirmation_runtime_consumption_plan",
                input_model=RuntimeConsumptionPlanInput,
                result_model=RuntimeConsumptionPlan,
                run=plan_runtime_consumption,
            ),
        )
    }
)


_JSON_TYPE = {dict: "object", list: "array", str: "string", int: "number", float: "number"}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _explain(name: str, error: ValidationError) -> PlanInputError:
    """One PlanInputError naming the first bad field; further faults summarized after it."""
    faults: list[tuple[str | None, str, object]] = []
    for detail in error.errors(include_url=False):
        loc = detail["loc"]
        field = str(loc[0]) if loc else None
        value: object = detail.get("input")
        problem = detail["msg"].removeprefix("Value error, ")
        if detail["type"] == "extra_forbidden":
            problem, value = "unknown field (not permitted)", None
        elif detail["type"] == "duplicate_field":
            field, value = str(detail.get("ctx", {}).get("alias")), None
        faults.append((field, problem, None if value is None else safe_repr(value)))
    field, problem, value = faults[0]
    if len(faults) > 1:
        others = "; ".join(
            f"field {f!r}: {p}" if f else p for f, p, _ in faults[1:_MAX_ERRORS_SHOWN]
        )
        more = len(faults) - _MAX_ERRORS_SHOWN
        problem += f" (also {others}{f'; and {more} more' if more > 0 else ''})"
        value = None
    return PlanInputError(name, problem, field=field, value=value)


@overload
def parse_plan_input(planner_name: Literal["channel"], raw: object) -> ChannelPlanInput: ...
@overload
def parse_plan_input(
    planner_name: Literal["signal-source"], raw: object
) -> SignalSourcePlanInput: ...
@overload
def parse_plan_input(
    planner_name: Literal["runtime-consumption"], raw: object
) -> RuntimeConsumptionPlanInput: ...
@overload
def parse_plan_input(planner_name: str, raw: object) -> PlanInput: ...
def parse_plan_input(planner_name: str, raw: object) -> PlanInput:
    """Validate already-decoded JSON for the named planner; raise :class:`PlanInputError`.

    ``raw`` must be a mapping (a decoded JSON object); planning decodes no text: callers
    decode it strictly first (no duplicate keys, no NaN/Infinity, bounded size). Fields are
    validated strictly against the planner's input model: unknown fields, wrong types and a
    field given under both its camelCase and snake_case names are refused, and the one-line
    message names the field.
    """
    planner = PLANNERS.get(planner_name) if isinstance(planner_name, str) else None
    if planner is None:
        raise PlanInputError(
            None,
            "unknown planner; expected one of: " + ", ".join(sorted(PLANNERS)),
            field="planner",
            value=safe_repr(planner_name),
        )
    name = planner.name
    if not isinstance(raw, Mapping):
        raise PlanInputError(name, "input must be a JSON object", value=_json_type(raw))
    try:
        return planner.input_model.model_validate(dict(raw))
    except ValidationError as exc:
        raise _explain(name, exc) from exc
