"""Regenerate keyring-v1.json (see README.md). Prints JSON to stdout."""

from __future__ import annotations

import json

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit.wire import b64url_encode
from guard._evidence.keys import Keyring, KeyringEntry, Signer, key_id_for

OLD_SEED = bytes(range(32))
NEW_SEED = bytes(range(32, 64))


def _entry(private: Ed25519PrivateKey, **fields: str) -> KeyringEntry:
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return KeyringEntry.model_validate(
        {"keyId": key_id_for(private.public_key()), "publicKey": b64url_encode(raw), **fields}
    )


def main() -> None:
    old = Ed25519PrivateKey.from_private_bytes(OLD_SEED)
    new = Ed25519PrivateKey.from_private_bytes(NEW_SEED)
    keyring = Keyring(
        keys=(
            _entry(
                old,
                status="retired",
                createdAtIso="2026-11-22T00:00:00.000Z",
                retiredAtIso="2026-11-22T01:00:00.000Z",
            ),
            _entry(new, status="active", createdAtIso="2026-11-22T01:00:00.000Z"),
        )
    )
    # keys rotate: signed by the new key, countersigned by the one it retired.
    signed = keyring.signed(
        Signer(new, key_id_for(new.public_key())), Signer(old, key_id_for(old.public_key()))
    )
    vector = {
        "oldSeedHex": OLD_SEED.hex(),
        "newSeedHex": NEW_SEED.hex(),
        "signingMessageHex": keyring.signing_message().hex(),
        "keyring": signed.model_dump(mode="json", exclude_none=True),
    }
    print(json.dumps(vector, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
