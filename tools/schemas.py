"""JSON Schemas of every wire shape, generated from the pydantic models.

``make schemas`` (``python -m tools.schemas [DIRECTORY]``, default ``docs/schemas``) rewrites the
committed copies, the only ones in the repository; tests fail when they drift from the models.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from audit.tlog import ConsistencyProof, InclusionProof, ProofCheck
from audit.verify import AuditReport, VerifyResult
from audit.wire import EVENT_MODELS, AuditHead, AuditRecord
from guard._cli.confirm.approvals import ApprovalListings
from guard._cli.confirm.grants import GrantListings
from guard._evidence.dsse import DsseCheck, DsseEnvelope
from guard._evidence.keys import Keyring
from guard._evidence.models import ConsumeResult, Evaluation, EvidenceEnvelope, RecordResult
from guard._evidence.statement import DecisionStatement, OperatorDecision
from guard._pi.doctor import DoctorReport
from planning import PLANNERS

__all__ = ["DEFAULT_DIRECTORY", "generated_schemas", "main", "render", "write_schemas"]

DEFAULT_DIRECTORY = "docs/schemas"


def generated_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every model that crosses a process boundary."""
    models: dict[str, type[BaseModel]] = {
        "evidence-envelope.v1.schema.json": EvidenceEnvelope,
        "evaluation.schema.json": Evaluation,
        "record-result.schema.json": RecordResult,
        "consume-result.schema.json": ConsumeResult,
        "keyring.v1.schema.json": Keyring,
        "doctor-report.schema.json": DoctorReport,
        "audit-report.schema.json": AuditReport,
        "audit-verify-result.schema.json": VerifyResult,
        "proof-check.schema.json": ProofCheck,
        "grants-list.schema.json": GrantListings,
        "approvals-list.schema.json": ApprovalListings,
    }
    # The envelope is read by consumers: its validation schema is its wire shape.
    out = {
        name: model.model_json_schema(
            mode="validation" if model in (EvidenceEnvelope, Keyring) else "serialization"
        )
        for name, model in models.items()
    }
    out["audit-record.schema.json"] = AuditRecord.model_json_schema()
    out["audit-head.schema.json"] = AuditHead.model_json_schema()  # logs before checkpoints
    # The in-toto predicate "operator decision, report-only" (docs/dsse.md), as a verifier
    # reads it, and the whole statement it sits in.
    out["dsse-predicate-operator-decision.v1.schema.json"] = OperatorDecision.model_json_schema()
    out["dsse-statement.v1.schema.json"] = DecisionStatement.model_json_schema()
    out["dsse-envelope.schema.json"] = DsseEnvelope.model_json_schema()
    out["dsse-check.schema.json"] = DsseCheck.model_json_schema(mode="serialization")
    out["proof-inclusion.v1.schema.json"] = InclusionProof.model_json_schema()
    out["proof-consistency.v1.schema.json"] = ConsistencyProof.model_json_schema()
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
    """Write every generated schema into ``directory`` and remove stale ``*.schema.json`` files."""
    directory.mkdir(parents=True, exist_ok=True)
    schemas = generated_schemas()
    for stale in sorted(directory.glob("*.schema.json")):
        if stale.name not in schemas:
            stale.unlink()
    written = []
    for name, schema in schemas.items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tools.schemas [DIRECTORY]``: regenerate the schemas, print the files written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1:
        sys.stderr.write("usage: python -m tools.schemas [DIRECTORY]\n")
        return 2
    for path in write_schemas(Path(args[0] if args else DEFAULT_DIRECTORY)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
