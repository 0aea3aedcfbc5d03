"""The shared operator-signature vectors through the guard's own consumer
(tests/vectors/operator/envelopes.json).

Each vector is an envelope whose guard-signed details may carry the operator's own WebAuthn
assertion (``operatorSignature``), a keyring enrolling the operator's credentials
(``operators``), an instant and the consumer's options; ``operator_result`` runs
:func:`guard.evidence.check_and_consume` with a fresh ledger and the envelope's own fingerprint as the
pending call (so checks 6 and 7 pass whenever the others do) and returns ``{"decision",
"reasons", "operatorSignature"}`` as the vectors state them. The TypeScript verifier runs the
same file (tests/verifier/); both must reach the stated outcome on every vector.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from audit.wire import canonical_json, parse_iso
from guard._evidence.keys import Keyring, PublicKeyring
from guard._operator import OPERATOR_REASONS
from guard.evidence import SqliteLedger, check_and_consume
from tests.guard.evidence.envelope_vectors import _pending

FILE = Path(__file__).resolve().parents[2] / "vectors" / "operator" / "envelopes.json"


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FILE.read_text(encoding="utf-8"))
    return data


@cache
def _keyring(text: str) -> PublicKeyring:
    return PublicKeyring.from_keyring(Keyring.model_validate_json(text))


def operator_result(
    vector: dict[str, Any], doc: dict[str, Any], ledger_dir: Path
) -> dict[str, Any]:
    raw: str = vector["envelope"]
    ring = _keyring(json.dumps(vector.get("keyring", doc["keyring"]), sort_keys=True))
    ledger = SqliteLedger.open(ledger_dir / f"{uuid.uuid4().hex}.sqlite3")  # a fresh one
    options: dict[str, Any] = {}
    if "trustedOrigins" in vector:
        options["trusted_origins"] = frozenset(vector["trustedOrigins"])
    if vector.get("requireDialog") is True:
        options["require_dialog"] = True
    if vector.get("requireOperatorSignature") is True:
        options["require_operator_signature"] = True
    if "toolCallId" in vector:
        options["tool_call_id"] = vector["toolCallId"]
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
    return {
        "decision": result.match.decision,
        "reasons": list(result.reasons),
        "operatorSignature": result.operator_signature,
    }


DOC = load()


@pytest.mark.parametrize("vector", DOC["vectors"], ids=lambda v: v["id"])
def test_operator_vectors(vector: dict[str, Any], tmp_path: Path) -> None:
    assert operator_result(vector, DOC, tmp_path) == vector["expected"]


def test_there_is_a_vector_for_every_operator_reason_and_the_requirement() -> None:
    reasons = {r for v in DOC["vectors"] for r in v["expected"]["reasons"]}
    assert reasons >= {*OPERATOR_REASONS, "no-operator-signature", "schema-violation"}
    decisions = {v["expected"]["decision"] for v in DOC["vectors"]}
    assert decisions >= {"match", "untrusted", "malformed", "not-operator-signed"}
    signed = {
        v["expected"]["operatorSignature"] for v in DOC["vectors"] if v["id"].startswith("valid-")
    }
    assert signed == {"verified", "none"}


def test_each_algorithm_has_a_valid_vector() -> None:
    by_id = {c["credentialId"]: c["algorithm"] for c in DOC["keyring"]["operators"]}
    algorithms = {
        by_id.get(
            json.loads(v["envelope"])["details"].get("operatorSignature", {}).get("credentialId")
        )
        for v in DOC["vectors"]
        if v["expected"]["operatorSignature"] == "verified"
    }
    assert algorithms == {-7, -8, -257}


def test_the_keyring_signature_covers_the_operators() -> None:
    # The vectors' keyring is signed as the guard signs one: operators included.
    keyring = Keyring.model_validate_json(json.dumps(DOC["keyring"]))
    unsigned = {k: v for k, v in DOC["keyring"].items() if k != "signatures"}
    assert keyring.signing_message() == b"pi-operator-guard/keyring/v1\n" + canonical_json(unsigned)
    ring = PublicKeyring.from_keyring(keyring)
    (signature,) = keyring.signatures
    public, _ = ring.keys[signature.key_id]
    from audit.wire import b64url_decode

    raw = b64url_decode(signature.signature, 64)
    assert raw is not None
    assert PublicKeyring.verify(public, raw, keyring.signing_message())
    without = {k: v for k, v in DOC["keyring"].items() if k not in ("operators", "signatures")}
    message = Keyring.model_validate_json(json.dumps(without)).signing_message()
    assert message == b"pi-operator-guard/keyring/v1\n" + canonical_json(without)
