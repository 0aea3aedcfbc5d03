"""Signal-source planner: where a structured operator-confirmation signal can come from."""

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
    "SignalSourceDecision",
    "SignalSourcePlan",
    "SignalSourcePlanInput",
    "plan_signal_source",
]

SignalSourceDecision = Literal[
    "use-guard-owned-audit-entry",
    "build-wrapper-signal",
    "propose-upstream-tool-call-signal",
    "blocked",
]


class SignalSourcePlanInput(PlanInputModel):
    """Input of the signal-source planner. Every field may be omitted (default false)."""

    guard_owns_confirmation_dialog: bool = Field(
        default=False,
        description="The guard extension owns the confirmation dialog. Default false.",
    )
    tool_call_event_has_confirmation_signal: bool = Field(
        default=False,
        description=(
            "pi's tool_call event already carries a structured confirmation signal a wrapper "
            "can bind to the exact action. Default false."
        ),
    )
    extension_context_can_send_structured_message: bool = Field(
        default=False,
        description="The extension context can send a custom message with details. Default false.",
    )
    audit_entry_append_available: bool = Field(
        default=False,
        description=(
            "The guard can append a structured custom entry to the session "
            "(pi.appendEntry). Default false."
        ),
    )
    custom_messages_preserve_details: bool = Field(
        default=False,
        description=(
            "Custom messages keep their structured details on the way to the consumer; false "
            "means they arrive as text only, which is never a signal source. Default false."
        ),
    )
    upstream_mutation_allowed: bool = Field(
        default=False,
        description=(
            "Proposing a change to pi upstream is allowed (never a local node_modules patch). "
            "Default false."
        ),
    )


class SignalSourcePlan(PlanResultModel):
    """Report-only result of the signal-source planner."""

    source: SignalSourceDecision = Field(description="The planned signal source, or blocked.")
    reasons: Codes = Field(description="Kebab-case codes explaining the source, first = main.")
    next_actions: Codes = Field(description="Kebab-case codes of what to do next.")
    summary: Summary
    dispatch_allowed: DispatchNotAllowed = False
    can_override_monitor_block: MonitorBlockNotOverridable = False
    authorization: AuthorizationNone = "none"
    implementation_allowed: ImplementationNotAllowed = False

    @property
    def decision(self) -> SignalSourceDecision:
        """The planned source, under the name every plan shares."""
        return self.source


def _plan(
    source: SignalSourceDecision, reasons: list[str], next_actions: list[str]
) -> SignalSourcePlan:
    codes = tuple(reasons)
    return SignalSourcePlan(
        source=source,
        reasons=codes,
        next_actions=tuple(next_actions),
        summary=summary_line("signal-source-plan", "source", source, "", codes),
    )


def plan_signal_source(inp: SignalSourcePlanInput) -> SignalSourcePlan:
    """Plan the confirmation signal source. Pure: no I/O, no clock, same input -> same plan.

    First match wins: the guard's own dialog recorded as an audit entry; else a wrapper
    signal built from a tool_call confirmation signal or from structured (not text-only)
    custom messages; else an upstream proposal if allowed; else blocked.
    """
    if not isinstance(inp, SignalSourcePlanInput):
        raise PlanInputError(
            "signal-source", "expected a SignalSourcePlanInput", value=type(inp).__name__
        )
    structured_messages = (
        inp.extension_context_can_send_structured_message and inp.custom_messages_preserve_details
    )

    # Why the better sources were not chosen; appended after the main reasons.
    gaps: list[str] = []
    if inp.guard_owns_confirmation_dialog and not inp.audit_entry_append_available:
        gaps.append("audit-entry-append-unavailable")
    if (
        inp.extension_context_can_send_structured_message
        and not inp.custom_messages_preserve_details
    ):
        gaps.append("custom-messages-text-only")
    if (
        inp.custom_messages_preserve_details
        and not inp.extension_context_can_send_structured_message
    ):
        gaps.append("structured-message-send-unavailable")

    if inp.guard_owns_confirmation_dialog and inp.audit_entry_append_available:
        return _plan(
            "use-guard-owned-audit-entry",
            ["guard-owns-confirmation-dialog", "audit-entry-append-available"],
            [
                "record-evidence-from-guard-owned-dialog",
                "append-signed-envelope-as-audit-entry",
                "consume-structured-envelope-details-only",
            ],
        )

    if inp.tool_call_event_has_confirmation_signal or structured_messages:
        found: list[str] = []
        if inp.tool_call_event_has_confirmation_signal:
            found.append("tool-call-confirmation-signal-available")
        if structured_messages:
            found.append("structured-custom-message-available")
        return _plan(
            "build-wrapper-signal",
            [*found, *gaps],
            [
                "bind-wrapper-signal-to-exact-action-fingerprint",
                "emit-display-false-structured-envelope",
                "consume-with-ttl-and-single-use",
            ],
        )

    if inp.upstream_mutation_allowed:
        return _plan(
            "propose-upstream-tool-call-signal",
            ["no-local-structured-signal-source", "upstream-mutation-allowed", *gaps],
            [
                "draft-upstream-tool-call-confirmation-signal",
                "do-not-patch-node-modules",
                "keep-fail-closed-until-signal-exists",
            ],
        )

    return _plan(
        "blocked",
        ["no-structured-signal-source", "upstream-mutation-not-allowed", *gaps],
        [
            "let-guard-own-confirmation-dialog",
            "never-use-text-only-messages-as-signal",
            "keep-fail-closed",
        ],
    )
