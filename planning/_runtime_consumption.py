"""Runtime-consumption planner: can the guard consume structured evidence for an action yet."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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

__all__ = [
    "RuntimeConsumptionDecision",
    "RuntimeConsumptionPlan",
    "RuntimeConsumptionPlanInput",
    "plan_runtime_consumption",
]

RuntimeConsumptionDecision = Literal[
    "ready-for-guard-consumption",
    "needs-runtime-bridge",
    "needs-upstream-signal",
    "blocked",
]


class RuntimeConsumptionPlanInput(PlanInputModel):
    """Input of the runtime-consumption planner. Every field may be omitted."""

    guard_owns_confirmation_dialog: bool = Field(
        default=False,
        description="The guard extension owns the confirmation dialog. Default false.",
    )
    structured_envelope_details_available: bool = Field(
        default=False,
        description="The consumer receives the envelope's structured details. Default false.",
    )
    audit_entry_readable_by_consumer: bool = Field(
        default=False,
        description="The consumer can read the guard's session audit entries. Default false.",
    )
    custom_messages_text_only: bool = Field(
        default=True,
        description=(
            "Custom messages reach the consumer as text only. Default true: assumed until "
            "shown otherwise. Text is never accepted as evidence."
        ),
    )
    upstream_tool_call_has_confirmation_signal: bool = Field(
        default=False,
        description="pi's tool_call event carries a confirmation signal. Default false.",
    )
    destructive_or_protected_action: bool = Field(
        default=True,
        description=(
            "The action is destructive or protected. Default true: an action is treated as "
            "protected unless stated otherwise. A local-safe action consumes no evidence."
        ),
    )


class RuntimeConsumptionPlan(PlanResultModel):
    """Report-only result of the runtime-consumption planner."""

    readiness: RuntimeConsumptionDecision = Field(
        description="How ready the guard is to consume evidence for this action, or blocked."
    )
    reasons: Codes = Field(description="Kebab-case codes explaining the readiness, first = main.")
    next_actions: Codes = Field(description="Kebab-case codes of what to do next.")
    summary: Summary
    dispatch_allowed: DispatchNotAllowed = False
    can_override_monitor_block: MonitorBlockNotOverridable = False
    authorization: AuthorizationNone = "none"
    implementation_allowed: ImplementationNotAllowed = False
    text_only_evidence_accepted: Literal[False] = Field(
        default=False, description="Always false: text is never evidence."
    )

    @property
    def decision(self) -> RuntimeConsumptionDecision:
        """The readiness, under the name every plan shares."""
        return self.readiness


def _plan(
    readiness: RuntimeConsumptionDecision, reasons: list[str], next_actions: list[str]
) -> RuntimeConsumptionPlan:
    codes = tuple(reasons)
    return RuntimeConsumptionPlan(
        readiness=readiness,
        reasons=codes,
        next_actions=tuple(next_actions),
        summary=summary_line(
            "runtime-consumption-plan", "readiness", readiness, "text-only-evidence=no ", codes
        ),
    )


def plan_runtime_consumption(inp: RuntimeConsumptionPlanInput) -> RuntimeConsumptionPlan:
    """Plan runtime consumption. Pure: no I/O, no clock, same input -> same plan.

    First match wins: a local-safe action is blocked (no evidence is consumed for it); no
    confirmation origin (neither the guard's dialog nor an upstream tool_call signal) needs an
    upstream signal; structured details the consumer cannot read (from an audit entry, or
    from custom messages that are not text-only) need a runtime bridge; otherwise ready.
    """
    if not isinstance(inp, RuntimeConsumptionPlanInput):
        raise PlanInputError(
            "runtime-consumption",
            "expected a RuntimeConsumptionPlanInput",
            value=type(inp).__name__,
        )
    if not inp.destructive_or_protected_action:
        return _plan(
            "blocked",
            ["action-not-protected"],
            ["do-not-consume-evidence-for-local-safe-action"],
        )

    origins: list[str] = []
    if inp.guard_owns_confirmation_dialog:
        origins.append("guard-owns-confirmation-dialog")
    if inp.upstream_tool_call_has_confirmation_signal:
        origins.append("upstream-tool-call-confirmation-signal")

    carriers: list[str] = []
    if inp.audit_entry_readable_by_consumer:
        carriers.append("audit-entry-readable-by-consumer")
    if not inp.custom_messages_text_only:
        carriers.append("custom-messages-structured")

    gaps: list[str] = []
    if not inp.structured_envelope_details_available:
        gaps.append("structured-envelope-details-unavailable")
    if not carriers:
        gaps.append("no-structured-carrier-readable-by-consumer")
    if inp.custom_messages_text_only:
        gaps.append("custom-messages-text-only")

    if not origins:
        return _plan(
            "needs-upstream-signal",
            ["confirmation-signal-not-exposed", *gaps],
            [
                "let-guard-own-confirmation-dialog",
                "propose-upstream-tool-call-signal",
                "keep-fail-closed",
            ],
        )

    if not inp.structured_envelope_details_available or not carriers:
        return _plan(
            "needs-runtime-bridge",
            ["structured-details-not-readable-by-consumer", *origins, *gaps],
            [
                "bridge-structured-envelope-details-to-consumer",
                "never-accept-text-only-evidence",
                "keep-fail-closed",
            ],
        )

    tail = ["custom-messages-text-only-ignored"] if inp.custom_messages_text_only else []
    return _plan(
        "ready-for-guard-consumption",
        ["structured-evidence-readable-by-consumer", *origins, *carriers, *tail],
        [
            "consume-envelope-with-exact-match-ttl-single-use",
            "keep-fail-closed-on-any-rejection",
        ],
    )
