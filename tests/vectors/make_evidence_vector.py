"""Regenerate evidence-v1.json (see README.md). Prints JSON to stdout."""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit.wire import b64url_encode, canonical_json, sha256_prefixed
from guard._evidence.envelope import signing_message
from guard._evidence.keys import key_id_for

SEED = bytes(range(32))
TOOL_INPUT = {"command": "rm -rf build"}


def main() -> None:
    private = Ed25519PrivateKey.from_private_bytes(SEED)
    unsigned = {
        "schema": "pi-operator-guard/evidence/v1",
        "evidenceId": "oce_AAECAwQFBgcICQoLDA0ODw",
        "origin": "runtime-ui-confirm",
        "trusted": True,
        "actionKind": "destructive",
        "toolName": "bash",
        "scope": "/srv/project",
        "payloadHash": sha256_prefixed(canonical_json(TOOL_INPUT)),
        "toolCallId": "call_1",
        "createdAtIso": "2026-11-22T01:00:00.000Z",
        "expiresAtIso": "2026-11-22T01:00:30.000Z",
        "dispatchAllowed": False,
        "canOverrideMonitorBlock": False,
        "authorization": "none",
        "keyId": key_id_for(private.public_key()),
    }
    message = signing_message(unsigned)
    vector = {
        "seedHex": SEED.hex(),
        "toolInput": TOOL_INPUT,
        "unsignedDetails": unsigned,
        "signingMessageHex": message.hex(),
        "signature": b64url_encode(private.sign(message)),
    }
    print(json.dumps(vector, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
