"""The JSON Schemas generated from the planner models, compared with the one committed copy.

The input schemas are the pi tool parameter schemas and the sidecar's ``describe`` output, so a
change to them changes what callers may send. The committed copies live in docs/schemas/
(``plan-NAME-input.schema.json`` and ``plan-NAME-result.schema.json``); after a deliberate model
change, regenerate them with ``make schemas`` and review the diff before committing it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from planning import PLANNERS, ChannelPlanInput, PreferredChannel
from tools.schemas import render

SCHEMAS = Path(__file__).resolve().parent.parent.parent / "docs" / "schemas"


def _schemas() -> dict[str, dict[str, Any]]:
    """docs/schemas file name -> the schema the planner models generate now."""
    schemas: dict[str, dict[str, Any]] = {}
    for name, planner in PLANNERS.items():
        schemas[f"plan-{name}-input.schema.json"] = planner.input_model.model_json_schema()
        schemas[f"plan-{name}-result.schema.json"] = planner.result_model.model_json_schema(
            mode="serialization"
        )
    return schemas


def _walk(node: object) -> list[object]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found += _walk(value)
    elif isinstance(node, list):
        for value in node:
            found += _walk(value)
    return found


@pytest.mark.parametrize("filename", sorted(_schemas()))
def test_committed_schema_matches_the_model(filename: str) -> None:
    path = SCHEMAS / filename
    assert path.is_file(), f"{filename} missing from docs/schemas; run make schemas"
    assert path.read_text(encoding="utf-8") == render(_schemas()[filename]), (
        f"{filename} differs from the planner model; run make schemas and review the diff"
    )


def test_every_committed_planner_schema_has_a_planner() -> None:
    assert sorted(p.name for p in SCHEMAS.glob("plan-*.schema.json")) == sorted(_schemas())


@pytest.mark.parametrize("filename", sorted(_schemas()))
def test_schema_is_self_contained_closed_and_documented(filename: str) -> None:
    schema = _schemas()[filename]
    for node in _walk(schema):
        if isinstance(node, dict):
            assert "$ref" not in node
            assert "$defs" not in node
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["description"]
    for name, prop in schema["properties"].items():
        assert prop.get("title"), name
        assert prop.get("description"), name
        assert "anyOf" not in prop, name
        assert "null" not in json.dumps(prop), name


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_input_schema_lists_every_field_by_its_wire_name_and_requires_none(planner: str) -> None:
    model = PLANNERS[planner].input_model
    schema = model.model_json_schema()
    assert list(schema["properties"]) == [f.alias for f in model.model_fields.values()]
    assert "required" not in schema
    for name, info in model.model_fields.items():
        prop = schema["properties"][info.alias]
        if name == "preferred_channel":
            assert "default" not in prop
        else:
            assert prop == {**prop, "type": "boolean", "default": info.default}


def test_channel_input_schema_is_the_pi_tool_parameter_schema() -> None:
    schema = ChannelPlanInput.model_json_schema()
    assert PLANNERS["channel"].tool_name == "operator_confirmation_implementation_channel_plan"
    assert schema["properties"]["preferredChannel"]["enum"] == list(get_args(PreferredChannel))
    assert schema["properties"]["preferredChannel"]["type"] == "string"
    text = json.dumps(schema)
    assert "@earendil-works/pi-coding-agent" in text
    assert "@mariozechner/pi-coding-agent" in text


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_result_schema_pins_the_report_only_flags(planner: str) -> None:
    schema = PLANNERS[planner].result_model.model_json_schema(mode="serialization")
    props = schema["properties"]
    for flag in ("dispatchAllowed", "canOverrideMonitorBlock", "implementationAllowed"):
        assert props[flag]["const"] is False
        assert flag in schema["required"]
    assert props["authorization"]["const"] == "none"
    extra = {
        "channel": ["runtimeDestructiveDialogEnabled", "directNodeModulesPatchAllowed"],
        "runtime-consumption": ["textOnlyEvidenceAccepted"],
    }.get(planner, [])
    for flag in extra:
        assert props[flag]["const"] is False
    assert set(schema["required"]) == set(props)
