"""The Python consumer's answer to each shared envelope vector (tests/vectors/evidence/envelopes.json).

``envelope_result`` runs checks 1 to 5 of :func:`guard.evidence.check_and_consume` (the pending call is the
envelope's own fingerprint and the ledger is fresh, so check 7 and the fingerprint part of check 6
pass whenever 1 to 5 do), the call-id part of check 6 with the vector's ``toolCallId`` or
``callCheckedElsewhere``, and the dialog check (6a) for a vector with ``requireDialog``, and returns
``{"decision", "reasons"}`` as the vectors state them.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from audit.wire import parse_iso
from guard import Fingerprint
from guard._errors import MalformedEvidence
from guard._evidence.envelope import parse_envelope
from guard._evidence.keys import Keyring, PublicKeyring
from guard.evidence import SqliteLedger, check_and_consume

FILE = Path(__file__).resolve().parents[2] / "vectors" / "evidence" / "envelopes.json"


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FILE.read_text(encoding="utf-8"))
    return data


def keyring(doc: dict[str, Any]) -> PublicKeyring:
    return PublicKeyring.from_keyring(Keyring.model_validate_json(json.dumps(doc["keyring"])))


def raw_envelope(vector: dict[str, Any]) -> str | bytes:
    if "envelopeBase64" in vector:
        return base64.b64decode(vector["envelopeBase64"])
    text: str = vector["envelope"]
    return text


def _pending(raw: str | bytes) -> Fingerprint:
    try:
        envelope, _ = parse_envelope(raw)
    except MalformedEvidence:
        return Fingerprint(
            action_kind="destructive", tool_name="none", payload_hash="sha256:" + "0" * 64
        )
    return envelope.details.fingerprint()


def envelope_result(
    vector: dict[str, Any], ring: PublicKeyring, ledger_dir: Path
) -> dict[str, Any]:
    raw = raw_envelope(vector)
    ledger = SqliteLedger.open(ledger_dir / f"{uuid.uuid4().hex}.sqlite3")  # a fresh one
    options: dict[str, Any] = {}
    if "trustedOrigins" in vector:
        options["trusted_origins"] = frozenset(vector["trustedOrigins"])
    if vector.get("requireDialog") is True:
        options["require_dialog"] = True
    if "toolCallId" in vector:
        options["tool_call_id"] = vector["toolCallId"]
    if vector.get("callCheckedElsewhere") is True:
        options["call_checked_elsewhere"] = True
    try:
        result = check_and_consume(
            raw,
            _pending(raw),
            keyring=ring,
            ledger=ledger,
            now=parse_iso(vector["now"]),
            skew=timedelta(seconds=vector["skewSeconds"]),
            max_ttl_seconds=vector["maxTtlSeconds"],
            **options,
        )
    finally:
        ledger.close()
    return {"decision": result.match.decision, "reasons": list(result.reasons)}
