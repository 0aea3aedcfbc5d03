"""The JSON Schemas in docs/ are generated from the models, never edited by hand."""

from __future__ import annotations

from pathlib import Path

from tools.schemas import generated_schemas, render

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def test_committed_schemas_match_the_models() -> None:
    # Regenerate with: make schemas
    generated = generated_schemas()
    committed = {p.name for p in DOCS.glob("*.json")}
    assert committed == set(generated)
    for name, schema in generated.items():
        assert (DOCS / name).read_text(encoding="utf-8") == render(schema), name


def test_envelope_schema_pins_the_report_only_flags() -> None:
    details = generated_schemas()["evidence-envelope.v1.schema.json"]["$defs"]["EvidenceDetails"]
    props = details["properties"]
    assert props["dispatchAllowed"]["const"] is False
    assert props["canOverrideMonitorBlock"]["const"] is False
    assert props["authorization"]["const"] == "none"
    assert details["additionalProperties"] is False
