"""Read-only planners: which way a structured operator-confirmation signal may be built.

Pure functions over strict pydantic inputs; no I/O, no clock, deterministic. Every result is
a report: ``dispatch_allowed``, ``can_override_monitor_block`` and ``implementation_allowed``
are typed ``Literal[False]`` and ``authorization`` is ``Literal["none"]``. Imports nothing
of ``audit`` or ``guard``.
"""

from planning._channel import (
    ChannelDecision,
    ChannelPlan,
    ChannelPlanInput,
    PreferredChannel,
    plan_channel,
)
from planning._errors import PlanInputError, PlanningError
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
