"""JSON Schemas of every wire shape, generated from the pydantic models.

``python -m tools.schemas docs/schemas`` rewrites the committed copies; a test
fails when they drift from the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from audit import EVENT_MODELS, AuditHead, AuditRecord
from guard._evidence.keys import Keyring
from guard._evidence.models import ConsumeResult, Evaluation, EvidenceEnvelope, RecordResult
from planning import PLANNERS

__all__ = ["generated_schemas", "write_schemas"]


def generated_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every model that crosses a process boundary."""
    models: dict[str, type[BaseModel]] = {
        "evidence-envelope.v1.schema.json": EvidenceEnvelope,
        "evaluation.schema.json": Evaluation,
        "record-result.schema.json": RecordResult,
        "consume-result.schema.json": ConsumeResult,
        "keyring.v1.schema.json": Keyring,
    }
    # The envelope is read by consumers: its validation schema is its wire shape.
    out = {
        name: model.model_json_schema(
            mode="validation" if model in (EvidenceEnvelope, Keyring) else "serialization"
        )
        for name, model in models.items()
    }
    out["audit-record.schema.json"] = AuditRecord.model_json_schema()
    out["audit-head.schema.json"] = AuditHead.model_json_schema()
    for event, model in sorted(EVENT_MODELS.items()):
        out[f"audit-event-{event}.schema.json"] = model.model_json_schema()
    for planner in PLANNERS.values():
        out[f"plan-{planner.name}-input.schema.json"] = planner.input_model.model_json_schema()
        out[f"plan-{planner.name}-result.schema.json"] = planner.result_model.model_json_schema(
            mode="serialization"
        )
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in generated_schemas().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(path)
