"""Write a large, valid, signed audit log fast, without going through ``AuditLog``.

Each line is assembled from canonical pieces (the members of a canonical record are in
the fixed order ``data, event, hash, prev, seq, ts``), hashed once and written in big
buffered chunks; the checkpoint head is signed with a throwaway Ed25519 key. ``verify_log`` must
call the result ``intact``: the benchmark checks that before it believes any timing.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from audit.tlog import Checkpoint, Frontier, TreeState, leaf_hash, origin_for, sign_checkpoint
from audit.wire import LOG_SCHEMA, canonical_json, genesis_hash

_ID_PLACEHOLDER = "oce_" + "Q" * 22
_BASE = datetime(2026, 11, 22, 1, 0, 0, tzinfo=UTC)


def _templates(key_id: str) -> list[tuple[bytes, bytes]]:
    """``(event, canonical data with id markers)`` for a realistic mix of events."""
    fingerprint = {
        "actionKind": "destructive",
        "toolName": "bash",
        "path": "/srv/project/build",
        "scope": "/srv/project",
        "payloadHash": "sha256:" + "ab" * 32,
    }
    events: list[tuple[str, dict[str, object]]] = [
        (
            "confirmation.recorded",
            {
                "evidenceId": _ID_PLACEHOLDER,
                "origin": "runtime-ui-confirm",
                **fingerprint,
                "toolCallId": "call_" + _ID_PLACEHOLDER,
                "createdAtIso": "2026-11-22T01:00:00.000Z",
                "expiresAtIso": "2026-11-22T01:00:30.000Z",
                "keyId": key_id,
                "preview": "rm -rf build",
            },
        ),
        ("evidence.consumed", {"evidenceId": _ID_PLACEHOLDER, **fingerprint}),
        (
            "tool.executed",
            {
                "toolCallId": "call_" + _ID_PLACEHOLDER,
                "isError": False,
                "evidenceId": _ID_PLACEHOLDER,
                **fingerprint,
                "preview": "rm -rf build",
            },
        ),
        (
            "confirmation.declined",
            {"reason": "declined", **fingerprint, "toolCallId": "call_" + _ID_PLACEHOLDER},
        ),
    ]
    out = []
    for event, data in events:
        canon = canonical_json(data).replace(b"call_" + _ID_PLACEHOLDER.encode(), b"\0C")
        canon = canon.replace(_ID_PLACEHOLDER.encode(), b"\0")
        out.append((event.encode(), canon))
    return out


def _fill(template: bytes, ident: bytes) -> bytes:
    return template.replace(b"\0C", b"call_" + ident).replace(b"\0", ident)


def key_id_of(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()


def _ts(index: int) -> bytes:
    moment = _BASE + timedelta(milliseconds=index)
    return (moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z").encode()


def generate(
    path: Path, records: int, key: Ed25519PrivateKey, *, mark: int | None = None
) -> tuple[int, tuple[bytes, TreeState] | None]:
    """Write ``records`` records (record 0 is ``log.created``) and a signed checkpoint head.

    Returns the size in bytes and, with ``mark``, the signed checkpoint of the first
    ``mark`` records with the tree state an anchor keeps beside it.
    """
    key_id = key_id_of(key.public_key())
    templates = _templates(key_id)
    log_id = "log_benchmark" + "0" * 12
    sha = hashlib.sha256
    prev = genesis_hash(log_id).encode()
    created = canonical_json({"logId": log_id, "schema": LOG_SCHEMA})
    buffer: list[bytes] = []
    size = 0
    frontier = Frontier()
    origin = origin_for(log_id)
    anchored: tuple[bytes, TreeState] | None = None
    with path.open("wb") as out:
        for seq in range(records):
            ts = _ts(seq)
            if seq == 0:
                event, data = b"log.created", created
            else:
                event, template = templates[seq % len(templates)]
                ident = base64.urlsafe_b64encode(seq.to_bytes(16, "big")).rstrip(b"=")
                data = _fill(template, b"oce_" + ident)
            tail = b'","prev":"' + prev + b'","seq":' + str(seq).encode() + b',"ts":"' + ts
            head_part = b'{"data":' + data + b',"event":"' + event
            digest = b"sha256:" + sha(head_part + tail + b'"}').hexdigest().encode()
            line = head_part + b'","hash":"' + digest + tail + b'"}\n'
            buffer.append(line)
            if mark is not None and seq == mark - 1:
                state = TreeState(size, frontier.copy())
                frontier.append(leaf_hash(line[:-1]))
                note = sign_checkpoint(
                    Checkpoint(origin, mark, frontier.root()), key.public_key(), key.sign
                )
                anchored = (note, state)
            else:
                frontier.append(leaf_hash(line[:-1]))
            size += len(line)
            prev = digest
            if len(buffer) >= 8192:
                out.write(b"".join(buffer))
                buffer.clear()
        out.write(b"".join(buffer))
    note = sign_checkpoint(Checkpoint(origin, records, frontier.root()), key.public_key(), key.sign)
    path.with_name(path.name + ".head").write_bytes(note)
    return size, anchored
