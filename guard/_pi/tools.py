"""The guard's own pi tools (the read-only planner), defined once for the shim and the sidecar.

``pi-guard install`` writes them to ``tools.json`` beside the shim, so pi lists them in the
model's first request; the sidecar's ``describe`` answers the same list.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._policy import PLANNER_TOOL_NAME

__all__ = ["PlannerTool", "planner_tools"]


class PlannerTool(BaseModel):
    """A pi tool definition; ``parameters`` is the planner input model's JSON Schema."""

    model_config = WIRE_CONFIG

    name: str
    label: str
    description: str
    planner: str
    parameters: dict[str, Any]


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline local ``$ref``s so the schema stands alone (pi validates it as plain JSON Schema)."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in seen or name not in defs:
                    return {k: walk(v, seen) for k, v in node.items()}
                merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged, (*seen, name))
            return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        return node

    result: dict[str, Any] = walk(schema, ())
    return result


def planner_tools() -> list[PlannerTool]:
    """The read-only planner tool(s) the shim registers, schemas generated from the models."""
    from planning import PLANNERS

    planner = PLANNERS["channel"]
    return [
        PlannerTool(
            name=PLANNER_TOOL_NAME,
            label="Implementation channel plan",
            description=str(planner.description),
            planner="channel",
            parameters=_inline_refs(planner.input_model.model_json_schema()),
        )
    ]
