"""Regenerate dsse-v1.json (see README.md). Prints JSON to stdout."""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit.wire import AuditRecord, canonical_json, sha256_prefixed
from guard._evidence.dsse import pae, sign_statement
from guard._evidence.keys import Signer, key_id_for
from guard._evidence.statement import decision_from_record, statement_for

SEED = bytes(range(32))
OTHER_SEED = bytes(range(32, 64))
TOOL_INPUT = {"command": "rm -rf build"}


def record(key_id: str) -> AuditRecord:
    """A ``confirmation.recorded`` record as the log holds it (its preview redacted)."""
    return AuditRecord.model_validate(
        {
            "seq": 7,
            "ts": "2026-11-22T01:00:00.000Z",
            "event": "confirmation.recorded",
            "data": {
                "origin": "runtime-ui-confirm",
                "actionKind": "destructive",
                "toolName": "bash",
                "scope": "/srv/project",
                "payloadHash": sha256_prefixed(canonical_json(TOOL_INPUT)),
                "toolCallId": "call_1",
                "createdAtIso": "2026-11-22T01:00:00.000Z",
                "expiresAtIso": "2026-11-22T01:00:30.000Z",
                "keyId": key_id,
                "preview": "rm -rf build TOKEN=[REDACTED]",
                "evidenceId": "oce_AAECAwQFBgcICQoLDA0ODw",
                "approver": "pi-dialog",
            },
            "prev": "sha256:" + "11" * 32,
            "hash": "sha256:" + "22" * 32,
        }
    )


def _signed(signer: Signer, statement: dict[str, Any], payload_type: str) -> dict[str, Any]:
    payload = canonical_json(statement)
    return {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": payload_type,
        "signatures": [
            {
                "keyid": signer.key_id,
                "sig": base64.b64encode(signer.sign(pae(payload_type, payload))).decode(),
            }
        ],
    }


def main() -> None:
    private = Ed25519PrivateKey.from_private_bytes(SEED)
    signer = Signer(private, key_id_for(private.public_key()))
    other_private = Ed25519PrivateKey.from_private_bytes(OTHER_SEED)
    other = Signer(other_private, key_id_for(other_private.public_key()))
    statement = statement_for(decision_from_record(record(signer.key_id)))
    envelope = sign_statement(signer, statement).model_dump(mode="json")
    payload = base64.b64decode(envelope["payload"])
    stmt = json.loads(payload)
    payload_type = envelope["payloadType"]

    def edited(change: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(stmt))
        for path, value in change.items():
            *parents, last = path.split(".")
            node = out
            for part in parents:
                node = node[int(part)] if isinstance(node, list) else node[part]
            node[last] = value
        return out

    changed_payload = dict(envelope)
    changed_payload["payload"] = base64.b64encode(
        canonical_json(edited({"predicate.toolName": "write"}))
    ).decode()
    changed_subject = dict(envelope)
    changed_subject["payload"] = base64.b64encode(
        canonical_json(edited({"subject.0.digest": {"sha256": "33" * 32}}))
    ).decode()
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[0] ^= 1
    changed_signature = {
        **envelope,
        "signatures": [{"keyid": signer.key_id, "sig": base64.b64encode(bytes(sig)).decode()}],
    }
    other_sig = _signed(other, stmt, payload_type)["signatures"][0]["sig"]
    cases = [
        ("changed payload", changed_payload, "bad-signature"),
        ("changed subject", changed_subject, "bad-signature"),
        ("changed signature", changed_signature, "bad-signature"),
        ("signed by another key", _signed(other, stmt, payload_type), "wrong-key"),
        (
            "another key under this key's id",
            {**envelope, "signatures": [{"keyid": signer.key_id, "sig": other_sig}]},
            "bad-signature",
        ),
        ("wrong payloadType", _signed(signer, stmt, "application/json"), "wrong-payload-type"),
        (
            "re-signed, subject changed",
            _signed(signer, edited({"subject.0.digest": {"sha256": "33" * 32}}), payload_type),
            "subject-mismatch",
        ),
        (
            "re-signed, subject names another evidence",
            _signed(
                signer, edited({"subject.0.name": "pi-operator-guard/tool-input/x"}), payload_type
            ),
            "subject-mismatch",
        ),
        (
            "re-signed, predicate claims authorization",
            _signed(signer, edited({"predicate.authorization": "operator"}), payload_type),
            "not-report-only",
        ),
        (
            "re-signed, predicate allows dispatch",
            _signed(signer, edited({"predicate.dispatchAllowed": True}), payload_type),
            "not-report-only",
        ),
        (
            "re-signed, dispatchAllowed 0",
            _signed(signer, edited({"predicate.dispatchAllowed": 0}), payload_type),
            "not-report-only",
        ),
        (
            "re-signed, another predicate type",
            _signed(
                signer, edited({"predicateType": "https://slsa.dev/provenance/v1"}), payload_type
            ),
            "wrong-predicate-type",
        ),
        (
            "re-signed, statement v0.1",
            _signed(signer, edited({"_type": "https://in-toto.io/Statement/v0.1"}), payload_type),
            "wrong-statement-type",
        ),
        (
            "re-signed, predicate carries the preview",
            _signed(signer, edited({"predicate.preview": "rm -rf build"}), payload_type),
            "predicate-schema",
        ),
    ]
    vector = {
        "seedHex": SEED.hex(),
        "otherSeedHex": OTHER_SEED.hex(),
        "toolInput": TOOL_INPUT,
        "record": record(signer.key_id).model_dump(mode="json"),
        "statement": stmt,
        "payloadHex": payload.hex(),
        "paeHex": pae(payload_type, payload).hex(),
        "envelope": envelope,
        "refused": [
            {"name": name, "envelope": env, "reason": reason} for name, env, reason in cases
        ],
    }
    print(json.dumps(vector, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
