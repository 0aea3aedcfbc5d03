"""What the sidecar tells the shim about itself and the runtime: the footer text, a home it
cannot open (path and OS error), the dialog's choices (No first), the operator's decline
reason, and the runtime facts the planner tool fills in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.wire import MAX_OPERATOR_REASON_CHARS
from guard._sidecar.framing import RpcCode
from guard._sidecar.runtime import RUNTIME_FIELDS, fill_runtime_facts
from guard._sidecar.wire import RuntimeFacts
from planning import PLANNERS

from .test_sidecar import audit_events, call, one, rpc, run

UI = {"hasUi": True, "appendEntry": True}
NO_UI = {"hasUi": False, "appendEntry": True}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "guard-home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


def declined_records(home: Path) -> list[dict[str, Any]]:
    return [e["data"] for e in audit_events(home) if e["event"] == "confirmation.declined"]


# -- the footer and a home that cannot be opened ------------------------------------------------


def test_health_gives_the_footer_text_with_the_live_pid(home: Path) -> None:
    result = one(home, "health")
    assert result["statusText"] == f"operator-guard on (sidecar pid {result['pid']})"


def test_an_unusable_home_names_its_path_and_os_error_in_health_and_every_refusal(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("x")
    home = tmp_path / "file" / "home"
    health, evaluate = run(home, rpc("health", None, 1), rpc("evaluate", call(tmp_path), 2))
    status = health["result"]["statusText"]
    assert status == f"operator-guard home unusable ({home}: cannot create private directory:" + (
        " Not a directory)"
    )
    error = evaluate["error"]
    assert error["code"] == RpcCode.GUARD_UNAVAILABLE
    assert error["data"]["reason"] == "guard-open-failed"
    assert error["data"]["detail"] == status.removeprefix("operator-guard ")
    assert "Not a directory" in error["data"]["error"]


# -- the dialog: No first, and a reason --------------------------------------------------------


def test_the_dialog_offers_no_first_then_no_with_a_reason_then_yes(
    home: Path, project: Path
) -> None:
    dialog = one(home, "evaluate", call(project))["dialog"]
    choices = dialog["choices"]
    assert choices["no"] == "No"
    assert choices["noWithReason"].startswith("No, ")
    assert choices["stop"] == "No, and stop the agent"
    assert choices["yes"] == "Yes, this call once"
    assert choices["details"] == "Details…"
    assert "No is preselected" in dialog["details"]
    # The Details screen's one choice is Back: Enter there does not decline.
    assert "Enter alone declines" not in dialog["details"]
    assert dialog["reasonTitle"]
    assert dialog["reasonPlaceholder"]


def test_a_decline_reason_reaches_the_block_reason_and_the_audit_redacted(
    home: Path, project: Path
) -> None:
    said = "not now,\n\tuse  git clean -n first; GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz123456"
    result = one(home, "audit.declined", call(project, reason="declined", operatorReason=said))
    kept = "not now, use git clean -n first; GITHUB_TOKEN=[REDACTED]"
    assert f'the operator declined it, saying: "{kept}".' in result["blockReason"]
    assert result["blockReason"].endswith("[reason: declined]")
    (record,) = declined_records(home)
    assert record["reason"] == "declined"
    assert record["operatorReason"] == kept


def test_a_long_reason_is_cut_and_a_blank_one_is_left_out(home: Path, project: Path) -> None:
    long, blank = run(
        home,
        rpc("audit.declined", call(project, reason="declined", operatorReason="x" * 4096), 1),
        rpc("audit.declined", call(project, reason="declined", operatorReason=" \n\t "), 2),
    )
    first, second = declined_records(home)
    assert len(first["operatorReason"]) == MAX_OPERATOR_REASON_CHARS
    assert first["operatorReason"].endswith("…")
    assert first["operatorReason"] in long["result"]["blockReason"]
    assert "operatorReason" not in second
    assert "saying" not in blank["result"]["blockReason"]


def test_a_reason_over_the_wire_limit_is_invalid_params(home: Path, project: Path) -> None:
    (reply,) = run(
        home, rpc("audit.declined", call(project, reason="declined", operatorReason="x" * 4097))
    )
    assert reply["error"]["code"] == RpcCode.INVALID_PARAMS


def test_record_takes_the_reason_too(home: Path, project: Path) -> None:
    result = one(home, "record", call(project, confirmed=False, operatorReason="wrong folder"))
    assert result["decision"] == "declined"
    (record,) = declined_records(home)
    assert record["operatorReason"] == "wrong folder"


def test_a_yes_ignores_a_reason(home: Path, project: Path) -> None:
    result = one(home, "record", call(project, confirmed=True, operatorReason="ignored"))
    assert result["decision"] == "recorded"
    assert declined_records(home) == []


# -- the planner tool's runtime facts ------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"preferredChannel": "guard-owned"}])
def test_inside_pi_with_a_ui_the_guard_owns_the_dialog(home: Path, params: dict) -> None:
    plan = one(home, "plan", {"params": params, "runtime": UI})
    assert plan["channel"] == "guard-owned-report-only"
    assert plan["dispatchAllowed"] is False
    assert plan["authorization"] == "none"
    assert plan["runtime"]["filled"] == {"guardCanOwnDialog": True}
    assert plan["runtime"]["facts"] == UI
    assert "owns the confirmation dialog" in plan["runtime"]["note"]


def test_without_runtime_facts_nothing_is_assumed(home: Path) -> None:
    plan = one(home, "plan", {"params": {"preferredChannel": "guard-owned"}})
    assert plan["channel"] == "blocked"
    assert "guard-cannot-own-dialog" in plan["reasons"]
    assert "runtime" not in plan


def test_without_a_ui_the_guard_cannot_own_the_dialog(home: Path) -> None:
    plan = one(home, "plan", {"params": {}, "runtime": NO_UI})
    assert plan["channel"] == "blocked"
    assert plan["runtime"]["filled"] == {"guardCanOwnDialog": False}
    assert "blocked" in plan["runtime"]["note"]


@pytest.mark.parametrize("spelling", ["guardCanOwnDialog", "guard_can_own_dialog"])
def test_the_callers_explicit_field_wins(home: Path, spelling: str) -> None:
    plan = one(home, "plan", {"params": {spelling: False}, "runtime": UI})
    assert plan["channel"] == "blocked"
    assert plan["runtime"]["filled"] == {}


def test_signal_source_gets_the_dialog_and_append_entry(home: Path) -> None:
    plan = one(home, "plan", {"planner": "signal-source", "params": {}, "runtime": UI})
    assert plan["source"] == "use-guard-owned-audit-entry"
    assert plan["runtime"]["filled"] == {
        "guardOwnsConfirmationDialog": True,
        "auditEntryAppendAvailable": True,
    }


def test_every_runtime_field_is_a_real_planner_input_field() -> None:
    for planner, fields in RUNTIME_FIELDS.items():
        assert set(fields) <= set(PLANNERS[planner].input_model.model_fields), planner
        assert set(fields.values()) <= set(RuntimeFacts.model_fields)


def test_fill_leaves_the_callers_params_alone() -> None:
    params = {"preferredChannel": "guard-owned"}
    filled, which = fill_runtime_facts(
        "channel", params, RuntimeFacts(has_ui=True, append_entry=True)
    )
    assert params == {"preferredChannel": "guard-owned"}
    assert filled == {"preferredChannel": "guard-owned", "guardCanOwnDialog": True}
    assert which == {"guardCanOwnDialog": True}


def test_the_summary_does_not_deny_the_dialog_the_operator_sees(home: Path) -> None:
    plan = one(home, "plan", {"params": {}, "runtime": UI})
    assert "destructive-dialog=no" not in plan["summary"]
    assert "new-dialog=no" in plan["summary"]
