"""The planner registry and the one way raw input becomes a validated planner input."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, NoReturn, overload

from pydantic import ValidationError

from planning._channel import ChannelPlan, ChannelPlanInput, plan_channel
from planning._errors import PlanInputError
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
"""Largest accepted JSON input, in UTF-8 bytes."""

_MAX_ERRORS_SHOWN = 3
_MAX_INT_DIGITS = 400


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


class _Refused(Exception):
    """Raised from inside the json.loads hooks; becomes a PlanInputError."""

    def __init__(self, problem: str, value: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.value = value


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused("duplicate key", repr(key))
        result[key] = value
    return result


def _reject_constant(name: str) -> NoReturn:
    raise _Refused("NaN and Infinity are not JSON", repr(name))


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused("number out of range", repr(text))
    return value


def _bounded_int(text: str) -> int:
    # Python refuses very long integers with a message about its own settings; say it plainly.
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _Refused("number too long", text[:20] + "…")
    return int(text)


_JSON_TYPE = {dict: "object", list: "array", str: "string", int: "number", float: "number"}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _decode(name: str, raw: str | bytes | bytearray | memoryview) -> object:
    if isinstance(raw, str):
        # len() counts code points, each at least one UTF-8 byte: a cheap first bound.
        if len(raw) > MAX_INPUT_BYTES:
            raise PlanInputError(name, f"input larger than {MAX_INPUT_BYTES} bytes")
        try:
            size = len(raw.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise PlanInputError(name, "input is not valid Unicode (lone surrogate)") from exc
        if size > MAX_INPUT_BYTES:
            raise PlanInputError(name, f"input larger than {MAX_INPUT_BYTES} bytes")
        text = raw
    else:
        data = bytes(raw)
        if len(data) > MAX_INPUT_BYTES:
            raise PlanInputError(name, f"input larger than {MAX_INPUT_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanInputError(name, f"input is not valid UTF-8 (at byte {exc.start})") from exc
    try:
        return json.loads(
            text,
            object_pairs_hook=_reject_duplicates,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except _Refused as exc:
        raise PlanInputError(name, f"not valid JSON: {exc.problem}", value=exc.value) from exc
    except json.JSONDecodeError as exc:
        raise PlanInputError(
            name, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise PlanInputError(name, "not valid JSON: nested too deeply") from exc


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
        faults.append((field, problem, None if value is None else repr(value)))
    field, problem, value = faults[0]
    if len(faults) > 1:
        others = "; ".join(
            f"field {f!r}: {p}" if f else p for f, p, _ in faults[1:_MAX_ERRORS_SHOWN]
        )
        more = len(faults) - _MAX_ERRORS_SHOWN
        problem += f" (also {others}{f'; and {more} more' if more > 0 else ''})"
        value = None
    return PlanInputError(name, problem, field=field, value=value)


RawInput = str | bytes | Mapping[str, Any]


@overload
def parse_plan_input(planner_name: Literal["channel"], raw: RawInput) -> ChannelPlanInput: ...
@overload
def parse_plan_input(
    planner_name: Literal["signal-source"], raw: RawInput
) -> SignalSourcePlanInput: ...
@overload
def parse_plan_input(
    planner_name: Literal["runtime-consumption"], raw: RawInput
) -> RuntimeConsumptionPlanInput: ...
@overload
def parse_plan_input(planner_name: str, raw: RawInput) -> PlanInput: ...
def parse_plan_input(planner_name: str, raw: RawInput) -> PlanInput:
    """Validate raw input for the named planner; raise :class:`PlanInputError` on any fault.

    ``raw`` is JSON text (``str`` or UTF-8 ``bytes``, at most :data:`MAX_INPUT_BYTES`) or an
    already-decoded mapping. The JSON must be one object, without duplicate keys or
    NaN/Infinity. Fields are validated strictly against the planner's input model: unknown
    fields, wrong types and a field given under both its camelCase and snake_case names are
    refused, and the one-line message names the field.
    """
    planner = PLANNERS.get(planner_name) if isinstance(planner_name, str) else None
    if planner is None:
        raise PlanInputError(
            None,
            "unknown planner; expected one of: " + ", ".join(sorted(PLANNERS)),
            field="planner",
            value=repr(planner_name),
        )
    name = planner.name
    data: object
    if isinstance(raw, str | bytes | bytearray | memoryview):
        data = _decode(name, raw)
        if not isinstance(data, dict):
            raise PlanInputError(name, "input must be a JSON object", value=_json_type(data))
    elif isinstance(raw, Mapping):
        data = dict(raw)
    else:
        raise PlanInputError(name, "input must be JSON text or a mapping", value=type(raw).__name__)
    try:
        return planner.input_model.model_validate(data)
    except ValidationError as exc:
        raise _explain(name, exc) from exc
