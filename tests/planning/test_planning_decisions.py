"""Every planner decision, checked against tables written out by hand in this file.

The tables below are the expected behaviour (docs/monitor.md, "Planner",
shows the same rules); they are literal rows, not computed by the planning code. Each boolean input is
enumerated as false, true and absent, so the documented defaults are checked too.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from planning import (
    PLANNERS,
    ChannelPlan,
    ChannelPlanInput,
    PlanResult,
    RuntimeConsumptionPlan,
    RuntimeConsumptionPlanInput,
    SignalSourcePlan,
    SignalSourcePlanInput,
    parse_plan_input,
    plan_channel,
    plan_runtime_consumption,
    plan_signal_source,
)

KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
ABSENT = "absent"

# Columns: preferredChannel ("-" = absent), guardCanOwnDialog, wrapperCanPreserveStructuredDetails,
# upstreamChangeAccepted. Valid only when no prohibited request is made (see PROHIBITED).
CHANNEL_TABLE = """
    -            0 0 0  blocked
    -            0 0 1  upstream-pr-design
    -            0 1 0  wrapper-design
    -            0 1 1  wrapper-design
    -            1 0 0  guard-owned-report-only
    -            1 0 1  guard-owned-report-only
    -            1 1 0  guard-owned-report-only
    -            1 1 1  guard-owned-report-only
    guard-owned  0 0 0  blocked
    guard-owned  0 0 1  blocked
    guard-owned  0 1 0  blocked
    guard-owned  0 1 1  blocked
    guard-owned  1 0 0  guard-owned-report-only
    guard-owned  1 0 1  guard-owned-report-only
    guard-owned  1 1 0  guard-owned-report-only
    guard-owned  1 1 1  guard-owned-report-only
    wrapper      0 0 0  blocked
    wrapper      0 0 1  blocked
    wrapper      0 1 0  wrapper-design
    wrapper      0 1 1  wrapper-design
    wrapper      1 0 0  blocked
    wrapper      1 0 1  blocked
    wrapper      1 1 0  wrapper-design
    wrapper      1 1 1  wrapper-design
    upstream-pr  0 0 0  blocked
    upstream-pr  0 0 1  upstream-pr-design
    upstream-pr  0 1 0  blocked
    upstream-pr  0 1 1  upstream-pr-design
    upstream-pr  1 0 0  blocked
    upstream-pr  1 0 1  upstream-pr-design
    upstream-pr  1 1 0  blocked
    upstream-pr  1 1 1  upstream-pr-design
"""
CHANNEL_BOOLS = {
    "guardCanOwnDialog": False,
    "wrapperCanPreserveStructuredDetails": False,
    "upstreamChangeAccepted": False,
    "directNodeModulesPatchRequested": False,
    "destructiveRuntimeEnableRequested": False,
}
PROHIBITED = ("directNodeModulesPatchRequested", "destructiveRuntimeEnableRequested")

# Columns: guardOwnsConfirmationDialog, toolCallEventHasConfirmationSignal,
# extensionContextCanSendStructuredMessage, auditEntryAppendAvailable,
# customMessagesPreserveDetails, upstreamMutationAllowed.
SIGNAL_SOURCE_TABLE = """
    0 0 0 0 0 0  blocked
    0 0 0 0 0 1  propose-upstream-tool-call-signal
    0 0 0 0 1 0  blocked
    0 0 0 0 1 1  propose-upstream-tool-call-signal
    0 0 0 1 0 0  blocked
    0 0 0 1 0 1  propose-upstream-tool-call-signal
    0 0 0 1 1 0  blocked
    0 0 0 1 1 1  propose-upstream-tool-call-signal
    0 0 1 0 0 0  blocked
    0 0 1 0 0 1  propose-upstream-tool-call-signal
    0 0 1 0 1 0  build-wrapper-signal
    0 0 1 0 1 1  build-wrapper-signal
    0 0 1 1 0 0  blocked
    0 0 1 1 0 1  propose-upstream-tool-call-signal
    0 0 1 1 1 0  build-wrapper-signal
    0 0 1 1 1 1  build-wrapper-signal
    0 1 0 0 0 0  build-wrapper-signal
    0 1 0 0 0 1  build-wrapper-signal
    0 1 0 0 1 0  build-wrapper-signal
    0 1 0 0 1 1  build-wrapper-signal
    0 1 0 1 0 0  build-wrapper-signal
    0 1 0 1 0 1  build-wrapper-signal
    0 1 0 1 1 0  build-wrapper-signal
    0 1 0 1 1 1  build-wrapper-signal
    0 1 1 0 0 0  build-wrapper-signal
    0 1 1 0 0 1  build-wrapper-signal
    0 1 1 0 1 0  build-wrapper-signal
    0 1 1 0 1 1  build-wrapper-signal
    0 1 1 1 0 0  build-wrapper-signal
    0 1 1 1 0 1  build-wrapper-signal
    0 1 1 1 1 0  build-wrapper-signal
    0 1 1 1 1 1  build-wrapper-signal
    1 0 0 0 0 0  blocked
    1 0 0 0 0 1  propose-upstream-tool-call-signal
    1 0 0 0 1 0  blocked
    1 0 0 0 1 1  propose-upstream-tool-call-signal
    1 0 0 1 0 0  use-guard-owned-audit-entry
    1 0 0 1 0 1  use-guard-owned-audit-entry
    1 0 0 1 1 0  use-guard-owned-audit-entry
    1 0 0 1 1 1  use-guard-owned-audit-entry
    1 0 1 0 0 0  blocked
    1 0 1 0 0 1  propose-upstream-tool-call-signal
    1 0 1 0 1 0  build-wrapper-signal
    1 0 1 0 1 1  build-wrapper-signal
    1 0 1 1 0 0  use-guard-owned-audit-entry
    1 0 1 1 0 1  use-guard-owned-audit-entry
    1 0 1 1 1 0  use-guard-owned-audit-entry
    1 0 1 1 1 1  use-guard-owned-audit-entry
    1 1 0 0 0 0  build-wrapper-signal
    1 1 0 0 0 1  build-wrapper-signal
    1 1 0 0 1 0  build-wrapper-signal
    1 1 0 0 1 1  build-wrapper-signal
    1 1 0 1 0 0  use-guard-owned-audit-entry
    1 1 0 1 0 1  use-guard-owned-audit-entry
    1 1 0 1 1 0  use-guard-owned-audit-entry
    1 1 0 1 1 1  use-guard-owned-audit-entry
    1 1 1 0 0 0  build-wrapper-signal
    1 1 1 0 0 1  build-wrapper-signal
    1 1 1 0 1 0  build-wrapper-signal
    1 1 1 0 1 1  build-wrapper-signal
    1 1 1 1 0 0  use-guard-owned-audit-entry
    1 1 1 1 0 1  use-guard-owned-audit-entry
    1 1 1 1 1 0  use-guard-owned-audit-entry
    1 1 1 1 1 1  use-guard-owned-audit-entry
"""
SIGNAL_SOURCE_BOOLS = {
    "guardOwnsConfirmationDialog": False,
    "toolCallEventHasConfirmationSignal": False,
    "extensionContextCanSendStructuredMessage": False,
    "auditEntryAppendAvailable": False,
    "customMessagesPreserveDetails": False,
    "upstreamMutationAllowed": False,
}

# Columns: guardOwnsConfirmationDialog, structuredEnvelopeDetailsAvailable,
# auditEntryReadableByConsumer, customMessagesTextOnly, upstreamToolCallHasConfirmationSignal,
# destructiveOrProtectedAction.
RUNTIME_TABLE = """
    0 0 0 0 0 0  blocked
    0 0 0 0 0 1  needs-upstream-signal
    0 0 0 0 1 0  blocked
    0 0 0 0 1 1  needs-runtime-bridge
    0 0 0 1 0 0  blocked
    0 0 0 1 0 1  needs-upstream-signal
    0 0 0 1 1 0  blocked
    0 0 0 1 1 1  needs-runtime-bridge
    0 0 1 0 0 0  blocked
    0 0 1 0 0 1  needs-upstream-signal
    0 0 1 0 1 0  blocked
    0 0 1 0 1 1  needs-runtime-bridge
    0 0 1 1 0 0  blocked
    0 0 1 1 0 1  needs-upstream-signal
    0 0 1 1 1 0  blocked
    0 0 1 1 1 1  needs-runtime-bridge
    0 1 0 0 0 0  blocked
    0 1 0 0 0 1  needs-upstream-signal
    0 1 0 0 1 0  blocked
    0 1 0 0 1 1  ready-for-guard-consumption
    0 1 0 1 0 0  blocked
    0 1 0 1 0 1  needs-upstream-signal
    0 1 0 1 1 0  blocked
    0 1 0 1 1 1  needs-runtime-bridge
    0 1 1 0 0 0  blocked
    0 1 1 0 0 1  needs-upstream-signal
    0 1 1 0 1 0  blocked
    0 1 1 0 1 1  ready-for-guard-consumption
    0 1 1 1 0 0  blocked
    0 1 1 1 0 1  needs-upstream-signal
    0 1 1 1 1 0  blocked
    0 1 1 1 1 1  ready-for-guard-consumption
    1 0 0 0 0 0  blocked
    1 0 0 0 0 1  needs-runtime-bridge
    1 0 0 0 1 0  blocked
    1 0 0 0 1 1  needs-runtime-bridge
    1 0 0 1 0 0  blocked
    1 0 0 1 0 1  needs-runtime-bridge
    1 0 0 1 1 0  blocked
    1 0 0 1 1 1  needs-runtime-bridge
    1 0 1 0 0 0  blocked
    1 0 1 0 0 1  needs-runtime-bridge
    1 0 1 0 1 0  blocked
    1 0 1 0 1 1  needs-runtime-bridge
    1 0 1 1 0 0  blocked
    1 0 1 1 0 1  needs-runtime-bridge
    1 0 1 1 1 0  blocked
    1 0 1 1 1 1  needs-runtime-bridge
    1 1 0 0 0 0  blocked
    1 1 0 0 0 1  ready-for-guard-consumption
    1 1 0 0 1 0  blocked
    1 1 0 0 1 1  ready-for-guard-consumption
    1 1 0 1 0 0  blocked
    1 1 0 1 0 1  needs-runtime-bridge
    1 1 0 1 1 0  blocked
    1 1 0 1 1 1  needs-runtime-bridge
    1 1 1 0 0 0  blocked
    1 1 1 0 0 1  ready-for-guard-consumption
    1 1 1 0 1 0  blocked
    1 1 1 0 1 1  ready-for-guard-consumption
    1 1 1 1 0 0  blocked
    1 1 1 1 0 1  ready-for-guard-consumption
    1 1 1 1 1 0  blocked
    1 1 1 1 1 1  ready-for-guard-consumption
"""
RUNTIME_BOOLS = {
    "guardOwnsConfirmationDialog": False,
    "structuredEnvelopeDetailsAvailable": False,
    "auditEntryReadableByConsumer": False,
    "customMessagesTextOnly": True,
    "upstreamToolCallHasConfirmationSignal": False,
    "destructiveOrProtectedAction": True,
}


def _table(text: str) -> dict[tuple[str, ...], str]:
    rows: dict[tuple[str, ...], str] = {}
    for line in text.strip().splitlines():
        *key, decision = line.split()
        assert tuple(key) not in rows, f"duplicate row {line!r}"
        rows[tuple(key)] = decision
    return rows


def _bit(value: bool) -> str:
    return "1" if value else "0"


def _combinations(defaults: dict[str, bool]) -> Iterator[tuple[dict[str, Any], dict[str, bool]]]:
    """Every input with each field false, true or absent; plus the values the plan must see."""
    names = list(defaults)
    for values in itertools.product((False, True, ABSENT), repeat=len(names)):
        raw = {n: v for n, v in zip(names, values, strict=True) if v != ABSENT}
        seen = {
            n: defaults[n] if v == ABSENT else bool(v) for n, v in zip(names, values, strict=True)
        }
        yield raw, seen


def _run(planner: str, raw: dict[str, Any]) -> PlanResult:
    """Go the whole way from decoded JSON, as the CLI and the sidecar do."""
    p = PLANNERS[planner]
    return p.run(parse_plan_input(planner, json.loads(json.dumps(raw))))


def assert_report_only(result: PlanResult, decision_key: str) -> None:
    wire = json.loads(result.model_dump_json())
    assert wire["dispatchAllowed"] is False
    assert wire["canOverrideMonitorBlock"] is False
    assert wire["authorization"] == "none"
    assert wire["implementationAllowed"] is False
    assert wire[decision_key] == result.decision
    assert wire["reasons"]
    assert all(KEBAB.fullmatch(r) for r in wire["reasons"])
    assert wire["nextActions"]
    assert all(KEBAB.fullmatch(a) for a in wire["nextActions"])
    assert len(set(wire["reasons"])) == len(wire["reasons"])
    summary = wire["summary"]
    assert "\n" not in summary
    assert "\r" not in summary
    assert f"{decision_key}={result.decision} " in summary
    assert "dispatch=no" in summary
    assert "authorization=none" in summary
    assert type(result).model_validate_json(result.model_dump_json()) == result


def test_tables_cover_every_combination() -> None:
    assert len(_table(CHANNEL_TABLE)) == 4 * 2**3
    assert len(_table(SIGNAL_SOURCE_TABLE)) == 2**6
    assert len(_table(RUNTIME_TABLE)) == 2**6


def test_channel_matches_table_for_every_input() -> None:
    table = _table(CHANNEL_TABLE)
    failures = []
    checked = 0
    for preferred in (ABSENT, "guard-owned", "wrapper", "upstream-pr"):
        for raw, seen in _combinations(CHANNEL_BOOLS):
            if preferred != ABSENT:
                raw = {"preferredChannel": preferred, **raw}
            result = _run("channel", raw)
            assert isinstance(result, ChannelPlan)
            if any(seen[p] for p in PROHIBITED):
                expected = "blocked"
            else:
                key = (
                    "-" if preferred == ABSENT else preferred,
                    _bit(seen["guardCanOwnDialog"]),
                    _bit(seen["wrapperCanPreserveStructuredDetails"]),
                    _bit(seen["upstreamChangeAccepted"]),
                )
                expected = table[key]
            if result.channel != expected:
                failures.append((raw, result.channel, expected))
            assert_report_only(result, "channel")
            assert result.runtime_destructive_dialog_enabled is False
            assert result.direct_node_modules_patch_allowed is False
            wire = result.model_dump()
            assert wire["runtimeDestructiveDialogEnabled"] is False
            assert wire["directNodeModulesPatchAllowed"] is False
            checked += 1
    assert failures == []
    assert checked == 4 * 3**5


def test_signal_source_matches_table_for_every_input() -> None:
    table = _table(SIGNAL_SOURCE_TABLE)
    failures = []
    for raw, seen in _combinations(SIGNAL_SOURCE_BOOLS):
        result = _run("signal-source", raw)
        assert isinstance(result, SignalSourcePlan)
        expected = table[tuple(_bit(seen[n]) for n in SIGNAL_SOURCE_BOOLS)]
        if result.source != expected:
            failures.append((raw, result.source, expected))
        assert_report_only(result, "source")
    assert failures == []


def test_runtime_consumption_matches_table_for_every_input() -> None:
    table = _table(RUNTIME_TABLE)
    failures = []
    for raw, seen in _combinations(RUNTIME_BOOLS):
        result = _run("runtime-consumption", raw)
        assert isinstance(result, RuntimeConsumptionPlan)
        expected = table[tuple(_bit(seen[n]) for n in RUNTIME_BOOLS)]
        if result.readiness != expected:
            failures.append((raw, result.readiness, expected))
        assert_report_only(result, "readiness")
        assert result.text_only_evidence_accepted is False
        assert result.model_dump()["textOnlyEvidenceAccepted"] is False
    assert failures == []


# --- precedence and main reasons ------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "enable", "reasons"),
    [
        (True, False, ("direct-node-modules-patch-prohibited",)),
        (False, True, ("destructive-runtime-enable-prohibited",)),
        (
            True,
            True,
            ("direct-node-modules-patch-prohibited", "destructive-runtime-enable-prohibited"),
        ),
    ],
)
@pytest.mark.parametrize("preferred", [None, "guard-owned", "wrapper", "upstream-pr"])
def test_prohibited_request_wins_over_everything(
    patch: bool, enable: bool, reasons: tuple[str, ...], preferred: str | None
) -> None:
    everything_capable = ChannelPlanInput(
        guard_can_own_dialog=True,
        wrapper_can_preserve_structured_details=True,
        upstream_change_accepted=True,
        direct_node_modules_patch_requested=patch,
        destructive_runtime_enable_requested=enable,
        **({} if preferred is None else {"preferred_channel": preferred}),
    )
    plan = plan_channel(everything_capable)
    assert plan.channel == "blocked"
    assert plan.reasons == reasons
    assert plan.next_actions[0] == "withdraw-prohibited-request"
    assert plan.direct_node_modules_patch_allowed is False
    assert plan.runtime_destructive_dialog_enabled is False


def test_incapable_preference_blocks_and_names_the_alternatives() -> None:
    plan = plan_channel(
        ChannelPlanInput(
            preferred_channel="guard-owned",
            wrapper_can_preserve_structured_details=True,
            upstream_change_accepted=True,
        )
    )
    assert plan.channel == "blocked"
    assert plan.reasons == ("preferred-channel-not-capable", "guard-cannot-own-dialog")
    assert plan.next_actions == (
        "let-guard-own-confirmation-dialog",
        "consider-wrapper-channel",
        "consider-upstream-pr-channel",
        "keep-fail-closed",
    )


def test_channel_reasons_say_how_the_channel_was_chosen() -> None:
    preferred = plan_channel(
        ChannelPlanInput(
            preferred_channel="wrapper",
            guard_can_own_dialog=True,
            wrapper_can_preserve_structured_details=True,
        )
    )
    assert preferred.channel == "wrapper-design"
    assert preferred.reasons == (
        "wrapper-channel-preferred",
        "wrapper-preserves-structured-details",
    )
    fallback = plan_channel(ChannelPlanInput(upstream_change_accepted=True))
    assert fallback.channel == "upstream-pr-design"
    assert fallback.reasons == ("no-channel-preference", "upstream-change-accepted")
    assert "do-not-patch-node-modules" in fallback.next_actions


MAIN_REASONS = {
    "channel": {
        "blocked": {
            "direct-node-modules-patch-prohibited",
            "destructive-runtime-enable-prohibited",
            "preferred-channel-not-capable",
            "no-capable-channel",
        },
        "guard-owned-report-only": {"guard-owned-channel-preferred", "no-channel-preference"},
        "wrapper-design": {"wrapper-channel-preferred", "no-channel-preference"},
        "upstream-pr-design": {"upstream-pr-channel-preferred", "no-channel-preference"},
    },
    "signal-source": {
        "use-guard-owned-audit-entry": {"guard-owns-confirmation-dialog"},
        "build-wrapper-signal": {
            "tool-call-confirmation-signal-available",
            "structured-custom-message-available",
        },
        "propose-upstream-tool-call-signal": {"no-local-structured-signal-source"},
        "blocked": {"no-structured-signal-source"},
    },
    "runtime-consumption": {
        "ready-for-guard-consumption": {"structured-evidence-readable-by-consumer"},
        "needs-runtime-bridge": {"structured-details-not-readable-by-consumer"},
        "needs-upstream-signal": {"confirmation-signal-not-exposed"},
        "blocked": {"action-not-protected"},
    },
}


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_first_reason_is_the_main_reason_of_the_decision(planner: str) -> None:
    bools = {"channel": CHANNEL_BOOLS, "signal-source": SIGNAL_SOURCE_BOOLS}.get(
        planner, RUNTIME_BOOLS
    )
    seen_decisions = set()
    for raw, _ in _combinations(bools):
        result = _run(planner, raw)
        assert result.reasons[0] in MAIN_REASONS[planner][result.decision], raw
        seen_decisions.add(result.decision)
    assert seen_decisions == set(MAIN_REASONS[planner])


def test_text_only_custom_messages_are_never_a_signal_source() -> None:
    # With details not preserved, being able to send a "structured" message changes nothing.
    for bits in itertools.product((False, True), repeat=5):
        g, t, a, u, _ = bits
        common = {
            "guard_owns_confirmation_dialog": g,
            "tool_call_event_has_confirmation_signal": t,
            "audit_entry_append_available": a,
            "upstream_mutation_allowed": u,
            "custom_messages_preserve_details": False,
        }
        can = plan_signal_source(
            SignalSourcePlanInput(extension_context_can_send_structured_message=True, **common)
        )
        cannot = plan_signal_source(
            SignalSourcePlanInput(extension_context_can_send_structured_message=False, **common)
        )
        assert can.source == cannot.source
    only_text = plan_signal_source(
        SignalSourcePlanInput(extension_context_can_send_structured_message=True)
    )
    assert only_text.source == "blocked"
    assert "custom-messages-text-only" in only_text.reasons


def test_local_safe_action_consumes_no_evidence_whatever_else_is_true() -> None:
    plan = plan_runtime_consumption(
        RuntimeConsumptionPlanInput(
            guard_owns_confirmation_dialog=True,
            structured_envelope_details_available=True,
            audit_entry_readable_by_consumer=True,
            custom_messages_text_only=False,
            upstream_tool_call_has_confirmation_signal=True,
            destructive_or_protected_action=False,
        )
    )
    assert plan.readiness == "blocked"
    assert plan.reasons == ("action-not-protected",)
    assert plan.next_actions == ("do-not-consume-evidence-for-local-safe-action",)


def test_guard_owned_audit_entry_path_is_ready_for_consumption() -> None:
    plan = plan_runtime_consumption(
        RuntimeConsumptionPlanInput(
            guard_owns_confirmation_dialog=True,
            structured_envelope_details_available=True,
            audit_entry_readable_by_consumer=True,
        )
    )
    assert plan.readiness == "ready-for-guard-consumption"
    assert plan.reasons == (
        "structured-evidence-readable-by-consumer",
        "guard-owns-confirmation-dialog",
        "audit-entry-readable-by-consumer",
        "custom-messages-text-only-ignored",
    )


# --- a missing capability never yields a more permissive plan -------------------------------

RANK = {
    "channel": {
        "blocked": 0,
        "guard-owned-report-only": 1,
        "wrapper-design": 1,
        "upstream-pr-design": 1,
    },
    "signal-source": {
        "blocked": 0,
        "propose-upstream-tool-call-signal": 1,
        "build-wrapper-signal": 2,
        "use-guard-owned-audit-entry": 3,
    },
    "runtime-consumption": {
        "blocked": 0,
        "needs-upstream-signal": 1,
        "needs-runtime-bridge": 2,
        "ready-for-guard-consumption": 3,
    },
}
# field -> the value that means "capability present"
CAPABILITIES = {
    "channel": {
        "guardCanOwnDialog": True,
        "wrapperCanPreserveStructuredDetails": True,
        "upstreamChangeAccepted": True,
        "directNodeModulesPatchRequested": False,
        "destructiveRuntimeEnableRequested": False,
    },
    "signal-source": dict.fromkeys(SIGNAL_SOURCE_BOOLS, True),
    "runtime-consumption": {
        "guardOwnsConfirmationDialog": True,
        "structuredEnvelopeDetailsAvailable": True,
        "auditEntryReadableByConsumer": True,
        "customMessagesTextOnly": False,
        "upstreamToolCallHasConfirmationSignal": True,
    },
}


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_losing_a_capability_never_makes_a_plan_more_permissive(planner: str) -> None:
    capabilities = CAPABILITIES[planner]
    names = list(capabilities)
    preferences = (
        [None, "guard-owned", "wrapper", "upstream-pr"] if planner == "channel" else [None]
    )
    for preferred in preferences:
        for values in itertools.product((False, True), repeat=len(names)):
            raw: dict[str, Any] = dict(zip(names, values, strict=True))
            if preferred is not None:
                raw["preferredChannel"] = preferred
            before = RANK[planner][_run(planner, raw).decision]
            for name, present in capabilities.items():
                if raw[name] is present:
                    after = RANK[planner][_run(planner, {**raw, name: not present}).decision]
                    assert after <= before, (raw, name)


def test_same_input_same_plan_whatever_the_spelling() -> None:
    camel = parse_plan_input(
        "channel", {"preferredChannel": "wrapper", "wrapperCanPreserveStructuredDetails": True}
    )
    snake = parse_plan_input(
        "channel", {"preferred_channel": "wrapper", "wrapper_can_preserve_structured_details": True}
    )
    assert camel == snake
    assert plan_channel(camel) == plan_channel(snake) == plan_channel(camel)
    assert plan_channel(camel).model_dump_json() == plan_channel(snake).model_dump_json()
