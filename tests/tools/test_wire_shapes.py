"""The shim's reply shapes are generated from the pydantic models and cannot drift from them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG
from tools.pi import wire_shapes
from tools.pi.wire_shapes import BEGIN, END, SHIM, ShapeError, render, shape, splice


class _Nested(BaseModel):
    model_config = WIRE_CONFIG
    x: int


class _Sample(BaseModel):
    model_config = WIRE_CONFIG
    plain_text: str
    maybe_text: str | None = None
    choice: Literal["a", "b"] = "a"
    never: Literal[False] = False
    count: Annotated[int, Field(ge=0)] = 0
    ratio: float | None = None
    items: list[str] = Field(default_factory=list)
    nested: _Nested | None = None
    mapping: dict[str, Any] = Field(default_factory=dict)


def test_the_shim_holds_the_generated_shapes() -> None:
    source = SHIM.read_text()
    assert splice(source, render()) == source, (
        "the shim's wire shapes drifted from guard/_sidecar/wire.py: "
        "run python -m tools.pi.wire_shapes"
    )
    assert source.count(BEGIN) == 1 and source.count(END) == 1


def test_kinds_follow_the_json_the_model_writes() -> None:
    assert shape(_Sample) == {
        "plainText": "string",
        "maybeText": "string?",
        "choice": "string",
        "never": "boolean",
        "count": "number",
        "ratio": "number?",
        "items": "list",
        "nested": "object?",
        "mapping": "object",
    }


def test_a_field_the_shim_reads_that_python_dropped_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    shapes = dict(wire_shapes.SHAPES)
    model, reads = shapes["HEALTH"]
    shapes["HEALTH"] = (model, (*reads, "statusLine"))
    monkeypatch.setattr(wire_shapes, "SHAPES", shapes)
    with pytest.raises(ShapeError, match="HealthReply has no field statusLine"):
        render()


def test_a_retyped_field_changes_the_shim(monkeypatch: pytest.MonkeyPatch) -> None:
    class Retyped(BaseModel):
        model_config = WIRE_CONFIG
        ok: str  # was a bool
        status_text: str

    shapes = dict(wire_shapes.SHAPES)
    shapes["HEALTH"] = (Retyped, shapes["HEALTH"][1])
    monkeypatch.setattr(wire_shapes, "SHAPES", shapes)
    source = SHIM.read_text()
    assert splice(source, render()) != source
    assert 'const HEALTH = { ok: "string", statusText: "string" } as const;' in render()


def test_a_union_of_kinds_cannot_be_said() -> None:
    class Mixed(BaseModel):
        model_config = WIRE_CONFIG
        envelope: dict[str, Any] | str

    with pytest.raises(ShapeError, match="union of different kinds"):
        shape(Mixed)


def test_a_shim_without_the_markers_is_refused() -> None:
    with pytest.raises(ShapeError, match="no generated block"):
        splice("const TOOL = {} as const;\n", render())
