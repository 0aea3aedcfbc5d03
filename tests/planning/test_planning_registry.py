"""PLANNERS, purity and layering (the exports are pinned in tests/test_exported_members.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from pydantic import ValidationError

import planning
from planning import (
    PLANNERS,
    ChannelPlan,
    Planner,
    RuntimeConsumptionPlan,
    SignalSourcePlan,
    parse_plan_input,
    plan_channel,
)

pytestmark = pytest.mark.integration


def test_planners_are_keyed_by_their_cli_names() -> None:
    assert list(PLANNERS) == ["channel", "signal-source", "runtime-consumption"]
    expected = {
        "channel": ("operator_confirmation_implementation_channel_plan", ChannelPlan),
        "signal-source": ("operator_confirmation_signal_source_plan", SignalSourcePlan),
        "runtime-consumption": (
            "operator_confirmation_runtime_consumption_plan",
            RuntimeConsumptionPlan,
        ),
    }
    for key, planner in PLANNERS.items():
        assert isinstance(planner, Planner)
        assert planner.name == key
        assert (planner.tool_name, planner.result_model) == expected[key]
        assert planner.description
        assert "\n" not in planner.description
        assert "read-only" in planner.description
        result = planner.run(planner.input_model())
        assert isinstance(result, planner.result_model)


def test_registry_and_planners_are_immutable() -> None:
    with pytest.raises(TypeError):
        PLANNERS["evil"] = PLANNERS["channel"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        PLANNERS["channel"].name = "evil"  # type: ignore[misc]


def test_results_cannot_be_made_to_authorize_anything() -> None:
    plan = plan_channel(planning.ChannelPlanInput(guard_can_own_dialog=True))
    assert plan.channel == "guard-owned-report-only"
    for field, value in [
        ("dispatch_allowed", True),
        ("can_override_monitor_block", True),
        ("implementation_allowed", True),
        ("runtime_destructive_dialog_enabled", True),
        ("direct_node_modules_patch_allowed", True),
        ("authorization", "full"),
    ]:
        with pytest.raises(ValidationError):
            plan.model_copy(update={field: value})
        with pytest.raises(ValidationError):
            ChannelPlan.model_validate({**plan.model_dump(), field: value})
        with pytest.raises(ValidationError):
            setattr(plan, field, value)
    # Copying with an allowed update still works and still validates.
    copy = plan.model_copy(update={"summary": "another line"})
    assert copy.summary == "another line"
    assert copy.dispatch_allowed is False
    with pytest.raises(ValidationError):
        plan.model_copy(update={"reasons": ("Not Kebab",)})
    with pytest.raises(ValidationError):
        plan.model_copy(update={"summary": "two\nlines"})


def test_results_refuse_true_flags_on_the_wire() -> None:
    wire = json.loads(plan_channel(planning.ChannelPlanInput()).model_dump_json())
    assert ChannelPlan.model_validate_json(json.dumps(wire)).channel == "blocked"
    for flag in ("dispatchAllowed", "directNodeModulesPatchAllowed"):
        with pytest.raises(ValidationError):
            ChannelPlan.model_validate_json(json.dumps({**wire, flag: True}))


def _run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_planning_imports_nothing_of_ours() -> None:
    out = _run_python(
        """
        import sys
        import planning
        for name in planning.__all__:  # the face imports its names on first use
            getattr(planning, name)
        print(sorted(m for m in sys.modules if m.split(".")[0] in {"audit", "guard"}))
        """
    )
    assert out.strip() == "[]"


def test_planners_do_no_io() -> None:
    # A real interpreter with an audit hook: any file, socket, process or environment
    # access during planning shows up as an audit event.
    out = _run_python(
        """
        import json, sys
        from planning import PLANNERS, PlanInputError, parse_plan_input
        raws = ['{}', '{"guardCanOwnDialog": true}', '{"preferredChannel": "wrapper"}']
        events = []
        ran = {}
        watched = ("open", "os.", "socket.", "subprocess.", "shutil.", "urllib.", "sqlite3.")
        def hook(event, args):
            if event.startswith(watched):
                events.append(event)
        sys.addaudithook(hook)
        for name, planner in PLANNERS.items():
            for raw in raws:
                try:
                    plan_input = parse_plan_input(name, json.loads(raw))
                except PlanInputError:
                    continue  # an input this planner does not take; nothing ran
                planner.run(plan_input)  # any exception here fails the test
                ran[name] = ran.get(name, 0) + 1
        print(json.dumps({"events": events, "ran": ran}))
        """
    )
    result = json.loads(out)
    assert result["events"] == []
    assert set(result["ran"]) == set(PLANNERS)
    assert result["ran"]["channel"] == 3


def test_plans_are_deterministic_across_processes() -> None:
    code = """
        import json
        from planning import PLANNERS
        plans = {n: p.run(p.input_model()).model_dump(mode="json") for n, p in PLANNERS.items()}
        print(json.dumps(plans))
    """
    first, second = _run_python(code), _run_python(code)
    assert first == second
    here = {n: p.run(p.input_model()).model_dump(mode="json") for n, p in PLANNERS.items()}
    assert json.loads(first) == here


def test_parse_then_run_round_trip_for_every_planner() -> None:
    for name, planner in PLANNERS.items():
        result = planner.run(parse_plan_input(name, {}))
        again = planner.result_model.model_validate_json(result.model_dump_json())
        assert again == result
        assert again.decision == result.decision
