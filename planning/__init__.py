"""Read-only planners: which way a structured operator-confirmation signal may be built.

Pure functions over strict pydantic inputs; no I/O, no clock, deterministic. Every result is
a report: ``dispatch_allowed``, ``can_override_monitor_block`` and ``implementation_allowed``
are typed ``Literal[False]`` and ``authorization`` is ``Literal["none"]``. Imports nothing
of ``audit`` or ``guard``.
"""

import typing

from planning._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from planning._channel import (
        ChannelDecision,
        ChannelPlan,
        ChannelPlanInput,
        PreferredChannel,
        plan_channel,
    )
    from planning._errors import (
        PlanInputError,
        PlanningError,
    )
    from planning._registry import (
        MAX_INPUT_BYTES,
        PLANNERS,
        PlanInput,
        Planner,
        PlanResult,
        parse_plan_input,
    )
    from planning._runtime_consumption import (
        RuntimeConsumptionDecision,
        RuntimeConsumptionPlan,
        RuntimeConsumptionPlanInput,
        plan_runtime_consumption,
    )
    from planning._signal_source import (
        SignalSourceDecision,
        SignalSourcePlan,
        SignalSourcePlanInput,
        plan_signal_source,
    )

__all__ = [
    "MAX_INPUT_BYTES",
    "PLANNERS",
    "ChannelDecision",
    "ChannelPlan",
    "ChannelPlanInput",
    "PlanInput",
    "PlanInputError",
    "PlanResult",
    "Planner",
    "PlanningError",
    "PreferredChannel",
    "RuntimeConsumptionDecision",
    "RuntimeConsumptionPlan",
    "RuntimeConsumptionPlanInput",
    "SignalSourceDecision",
    "SignalSourcePlan",
    "SignalSourcePlanInput",
    "parse_plan_input",
    "plan_channel",
    "plan_runtime_consumption",
    "plan_signal_source",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "ChannelDecision": "planning._channel",
    "ChannelPlan": "planning._channel",
    "ChannelPlanInput": "planning._channel",
    "PreferredChannel": "planning._channel",
    "plan_channel": "planning._channel",
    "PlanInputError": "planning._errors",
    "PlanningError": "planning._errors",
    "MAX_INPUT_BYTES": "planning._registry",
    "PLANNERS": "planning._registry",
    "PlanInput": "planning._registry",
    "PlanResult": "planning._registry",
    "Planner": "planning._registry",
    "parse_plan_input": "planning._registry",
    "RuntimeConsumptionDecision": "planning._runtime_consumption",
    "RuntimeConsumptionPlan": "planning._runtime_consumption",
    "RuntimeConsumptionPlanInput": "planning._runtime_consumption",
    "plan_runtime_consumption": "planning._runtime_consumption",
    "SignalSourceDecision": "planning._signal_source",
    "SignalSourcePlan": "planning._signal_source",
    "SignalSourcePlanInput": "planning._signal_source",
    "plan_signal_source": "planning._signal_source",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
