"""Implementation-channel planner: which way (if any) a confirmation signal may be built."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from planning._errors import PlanInputError
from planning._models import (
    AuthorizationNone,
    Codes,
    DispatchNotAllowed,
    ImplementationNotAllowed,
    MonitorBlockNotOverridable,
    PlanInputModel,
    PlanResultModel,
    Summary,
    summary_line,
)

__all__ = ["ChannelDecision", "ChannelPlan", "ChannelPlanInput", "PreferredChannel", "plan_channel"]

PreferredChannel = Literal["guard-owned", "wrapper", "upstream-pr"]
ChannelDecision = Literal[
    "guard-owned-report-only", "wrapper-design", "upstream-pr-design", "blocked"
]


def _drop_default(schema: dict[str, Any]) -> None:
    # Absent means "no preference"; the schema must not advertise null as a value.
    schema.pop("default", None)


class ChannelPlanInput(PlanInputModel):
    """Input of the implementation-channel planner. Every field may be omitted."""

    preferred_channel: PreferredChannel | SkipJsonSchema[None] = Field(
        default=None,
        description=(
            "The channel the operator prefers. Omit for no preference (the first capable "
            "channel in the order guard-owned, wrapper, upstream-pr is chosen). A stated "
            "preference that is not capable blocks instead of switching channels."
        ),
        json_schema_extra=_drop_default,
    )
    guard_can_own_dialog: bool = Field(
        default=False,
        description=(
            "The guard extension can own the operator confirmation dialog itself. "
            "Default false: not assumed."
        ),
    )
    wrapper_can_preserve_structured_details: bool = Field(
        default=False,
        description=(
            "A wrapper around pi can carry structured envelope details (not just text) to "
            "the consumer. Default false: not assumed."
        ),
    )
    upstream_change_accepted: bool = Field(
        default=False,
        description=(
            "pi's maintainers accept an upstream change that exposes a confirmation signal. "
            "Default false: not assumed."
        ),
    )
    direct_node_modules_patch_requested: bool = Field(
        default=False,
        description=(
            "The request includes patching node_modules/@earendil-works/pi-coding-agent or "
            "the legacy node_modules/@mariozechner/pi-coding-agent directly. Prohibited: true "
            "always blocks. Default false: not requested."
        ),
    )
    destructive_runtime_enable_requested: bool = Field(
        default=False,
        description=(
            "The request includes enabling an operational destructive-action dialog at "
            "runtime. Prohibited: true always blocks. Default false: not requested."
        ),
    )

    @field_validator("preferred_channel", mode="before")
    @classmethod
    def _one_of_the_channels(cls, value: object) -> object:
        # Checked here so a bad value gets one clear message, not one per union member.
        if value is None:
            raise ValueError("omit the field for no preference; null is not a channel")
        if not isinstance(value, str) or value not in get_args(PreferredChannel):
            raise ValueError("must be one of " + ", ".join(map(repr, get_args(PreferredChannel))))
        return value


class ChannelPlan(PlanResultModel):
    """Report-only result of the implementation-channel planner."""

    channel: ChannelDecision = Field(description="The planned channel, or blocked.")
    reasons: Codes = Field(description="Kebab-case codes explaining the channel, first = main.")
    next_actions: Codes = Field(description="Kebab-case codes of what to do next.")
    summary: Summary
    dispatch_allowed: DispatchNotAllowed = False
    can_override_monitor_block: MonitorBlockNotOverridable = False
    authorization: AuthorizationNone = "none"
    implementation_allowed: ImplementationNotAllowed = False
    runtime_destructive_dialog_enabled: Literal[False] = Field(
        default=False,
        description=(
            "Always false: no plan turns on a new operational destructive-action dialog "
            "(the guard's own report-only confirmation is already there; a plan neither "
            "adds nor removes it)."
        ),
    )
    direct_node_modules_patch_allowed: Literal[False] = Field(
        default=False, description="Always false: no plan allows patching pi in node_modules."
    )

    @property
    def decision(self) -> ChannelDecision:
        """The planned channel, under the name every plan shares."""
        return self.channel


_ORDER: tuple[PreferredChannel, ...] = ("guard-owned", "wrapper", "upstream-pr")
_PLANNED: dict[PreferredChannel, ChannelDecision] = {
    "guard-owned": "guard-owned-report-only",
    "wrapper": "wrapper-design",
    "upstream-pr": "upstream-pr-design",
}
_CAPABLE_CODE: dict[PreferredChannel, str] = {
    "guard-owned": "guard-can-own-dialog",
    "wrapper": "wrapper-preserves-structured-details",
    "upstream-pr": "upstream-change-accepted",
}
_INCAPABLE_CODE: dict[PreferredChannel, str] = {
    "guard-owned": "guard-cannot-own-dialog",
    "wrapper": "wrapper-cannot-preserve-structured-details",
    "upstream-pr": "upstream-change-not-accepted",
}
_ESTABLISH_ACTION: dict[PreferredChannel, str] = {
    "guard-owned": "let-guard-own-confirmation-dialog",
    "wrapper": "prove-wrapper-preserves-structured-details",
    "upstream-pr": "seek-upstream-acceptance",
}
_CONSIDER_ACTION: dict[PreferredChannel, str] = {
    "guard-owned": "consider-guard-owned-channel",
    "wrapper": "consider-wrapper-channel",
    "upstream-pr": "consider-upstream-pr-channel",
}
_CHANNEL_ACTIONS: dict[PreferredChannel, tuple[str, ...]] = {
    "guard-owned": (
        "record-evidence-from-guard-owned-confirm-only",
        "keep-operational-destructive-dialog-disabled",
        "verify-envelope-consumption-before-any-enable",
    ),
    "wrapper": (
        "design-wrapper-structured-envelope",
        "prove-consumer-receives-structured-details",
        "keep-fail-closed",
    ),
    "upstream-pr": (
        "draft-upstream-interface-proposal",
        "do-not-patch-node-modules",
        "keep-fail-closed-until-upstream-release",
    ),
}


def _plan(channel: ChannelDecision, reasons: list[str], next_actions: list[str]) -> ChannelPlan:
    codes = tuple(reasons)
    return ChannelPlan(
        channel=channel,
        reasons=codes,
        next_actions=tuple(next_actions),
        summary=summary_line(
            "channel-plan",
            "channel",
            channel,
            "new-dialog=no node-modules-patch=no ",
            codes,
        ),
    )


def plan_channel(inp: ChannelPlanInput) -> ChannelPlan:
    """Plan the implementation channel. Pure: no I/O, no clock, same input -> same plan.

    First match wins: a prohibited request blocks; a stated preference is planned if its
    capability is present and blocks otherwise; with no preference the first capable channel
    in the order guard-owned, wrapper, upstream-pr is planned; nothing capable blocks.
    """
    if not isinstance(inp, ChannelPlanInput):
        raise PlanInputError("channel", "expected a ChannelPlanInput", value=type(inp).__name__)
    capable: dict[PreferredChannel, bool] = {
        "guard-owned": inp.guard_can_own_dialog,
        "wrapper": inp.wrapper_can_preserve_structured_details,
        "upstream-pr": inp.upstream_change_accepted,
    }

    prohibited: list[str] = []
    if inp.direct_node_modules_patch_requested:
        prohibited.append("direct-node-modules-patch-prohibited")
    if inp.destructive_runtime_enable_requested:
        prohibited.append("destructive-runtime-enable-prohibited")
    if prohibited:
        return _plan("blocked", prohibited, ["withdraw-prohibited-request", "keep-fail-closed"])

    preferred = inp.preferred_channel
    if preferred is not None:
        if capable[preferred]:
            return _plan(
                _PLANNED[preferred],
                [f"{preferred}-channel-preferred", _CAPABLE_CODE[preferred]],
                list(_CHANNEL_ACTIONS[preferred]),
            )
        alternatives = [_CONSIDER_ACTION[c] for c in _ORDER if c != preferred and capable[c]]
        return _plan(
            "blocked",
            ["preferred-channel-not-capable", _INCAPABLE_CODE[preferred]],
            [_ESTABLISH_ACTION[preferred], *alternatives, "keep-fail-closed"],
        )

    for candidate in _ORDER:
        if capable[candidate]:
            return _plan(
                _PLANNED[candidate],
                ["no-channel-preference", _CAPABLE_CODE[candidate]],
                list(_CHANNEL_ACTIONS[candidate]),
            )
    return _plan(
        "blocked",
        ["no-capable-channel", *(_INCAPABLE_CODE[c] for c in _ORDER)],
        [*(_ESTABLISH_ACTION[c] for c in _ORDER), "keep-fail-closed"],
    )
