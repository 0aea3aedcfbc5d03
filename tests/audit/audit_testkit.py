"""Shared helpers for the audit tests (also imported by the child appender script)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


class FixedSigner:
    """An Ed25519 head signer from a fixed 32-byte seed."""

    def __init__(self, seed: bytes) -> None:
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_key: Ed25519PublicKey = self._key.public_key()
        raw = self.public_key.public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.key_id = "ed25519:" + hashlib.sha256(raw).hexdigest()

    @property
    def keys(self) -> dict[str, Ed25519PublicKey]:
        """The keyring that trusts this signer alone."""
        return {self.key_id: self.public_key}

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


def keyring(*signers: FixedSigner) -> dict[str, Ed25519PublicKey]:
    return {s.key_id: s.public_key for s in signers}


def phash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def executed(
    call: str,
    payload: str = "rm -rf build",
    *,
    kind: str = "destructive",
    tool: str = "bash",
    path: str | None = None,
    evidence_id: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "toolCallId": call,
        "toolName": tool,
        "isError": False,
        "actionKind": kind,
        "payloadHash": phash(payload),
    }
    if path is not None:
        data["path"] = path
    if evidence_id is not None:
        data["evidenceId"] = evidence_id
    return data


def recorded(
    evidence_id: str,
    call: str | None,
    payload: str = "rm -rf build",
    *,
    kind: str = "destructive",
    tool: str = "bash",
    path: str | None = None,
    key_id: str = "ed25519:" + "0" * 64,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "evidenceId": evidence_id,
        "origin": "runtime-ui-confirm",
        "actionKind": kind,
        "toolName": tool,
        "payloadHash": phash(payload),
        "createdAtIso": "2026-11-22T01:00:00.000Z",
        "expiresAtIso": "2026-11-22T01:00:30.000Z",
        "keyId": key_id,
    }
    if call is not None:
        data["toolCallId"] = call
    if path is not None:
        data["path"] = path
    return data


def declined(
    call: str | None, payload: str = "rm -rf build", *, reason: str = "declined"
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "reason": reason,
        "actionKind": "destructive",
        "toolName": "bash",
        "payloadHash": phash(payload),
    }
    if call is not None:
        data["toolCallId"] = call
    return data


def consumed(evidence_id: str, payload: str = "rm -rf build") -> dict[str, Any]:
    return {
        "evidenceId": evidence_id,
        "actionKind": "destructive",
        "toolName": "bash",
        "payloadHash": phash(payload),
    }


def rejected(
    call: str | None, payload: str = "rm -rf build", *, decision: str = "mismatch"
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "evidenceId": "oce_whatever",
        "decision": decision,
        "reasons": ["payload-hash-mismatch"],
        "actionKind": "destructive",
        "toolName": "bash",
        "payloadHash": phash(payload),
    }
    if call is not None:
        data["toolCallId"] = call
    return data


def checkpoint_head(
    log_path: Any,
    signer: FixedSigner,
    *,
    size: int | None = None,
    root: bytes | None = None,
    origin: str | None = None,
) -> bytes:
    """A checkpoint head signed by ``signer`` for the log as it is now (or as told)."""
    from audit.tlog import Checkpoint, leaf_hash, origin_for, root_of, sign_checkpoint

    lines = log_path.read_bytes().splitlines()
    n = len(lines) if size is None else size
    tree_root = root_of([leaf_hash(line) for line in lines[:n]]) if root is None else root
    if origin is None:
        origin = origin_for(json.loads(lines[0])["data"]["logId"])
    return sign_checkpoint(Checkpoint(origin, n, tree_root), signer.public_key, signer.sign)


def legacy_head(log_path: Any, signer: FixedSigner, **changes: Any) -> bytes:
    """A JSON head of the format before checkpoints, naming the last line (or as told)."""
    import base64

    from audit.wire import HEAD_DOMAIN, canonical_json

    last = json.loads(log_path.read_bytes().splitlines()[-1])
    head = {"seq": last["seq"], "hash": last["hash"], "ts": last["ts"], "keyId": signer.key_id}
    head.update(changes)
    unsigned = {k: v for k, v in head.items() if k != "signature"}
    signature = signer.sign(HEAD_DOMAIN + canonical_json(unsigned))
    head["signature"] = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    return canonical_json(head) + b"\n"
