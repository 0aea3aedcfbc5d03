"""The Python side's answer to each shared verifiable-log vector (tests/vectors/tlog/).

``checkpoint_result`` (``audit.tlog.open_checkpoint``) and ``proof_result`` (``audit.tlog.verify_proof``)
return ``{"decision", "reasons"}`` as the vectors state them; tests/audit/test_tlog_vectors.py asserts them, tests/verifier/ compares them with
the TypeScript verifier's answers.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from audit import JsonInputError, NoteError, ProofError
from audit.tlog import NoteKey, open_checkpoint, verify_proof

TLOG = Path(__file__).resolve().parents[1] / "vectors" / "tlog"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TLOG / name).read_text(encoding="utf-8"))
    return data


def _verified() -> dict[str, Any]:
    return {"decision": "verified", "reasons": []}


def _rejected(code: str) -> dict[str, Any]:
    return {"decision": "rejected", "reasons": [code]}


def note_bytes(vector: dict[str, Any]) -> bytes:
    if "noteBase64" in vector:
        return base64.b64decode(vector["noteBase64"])
    text: str = vector["note"]
    return text.encode("utf-8")


def checkpoint_result(vector: dict[str, Any]) -> dict[str, Any]:
    try:
        keys = [NoteKey.from_vkey(v) for v in vector["keys"]]
        open_checkpoint(note_bytes(vector), keys, origin=vector.get("origin"))
    except NoteError as exc:
        return _rejected(exc.code)
    return _verified()


def _invalid(code: str) -> dict[str, Any]:
    return {"decision": "invalid", "reasons": [code]}


def proof_result(vector: dict[str, Any]) -> dict[str, Any]:
    """``valid`` / ``invalid`` with the reasons, or ``malformed`` for what is no proof file."""
    try:
        keys = [NoteKey.from_vkey(v) for v in vector["keys"]]
    except NoteError as exc:
        return _invalid(exc.code)
    try:
        check = verify_proof(vector["file"].encode("utf-8"), keys)
    except (JsonInputError, ProofError) as exc:
        return {"decision": "malformed", "reasons": [exc.code]}
    return {"decision": check.decision, "reasons": list(check.reasons)}
