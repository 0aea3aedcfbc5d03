"""The Python side's answer to each shared verifiable-log vector (tests/vectors/tlog/).

``checkpoint_result`` and ``proof_result`` return ``{"decision", "reasons"}`` as the vectors
state them; tests/audit/test_tlog_vectors.py asserts them, tests/verifier/ compares them with
the TypeScript verifier's answers.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from audit import (
    JsonInputError,
    NoteError,
    NoteKey,
    ProofError,
    leaf_hash,
    load_json,
    open_checkpoint,
    verify_consistency,
    verify_inclusion,
)

TLOG = Path(__file__).resolve().parents[1] / "vectors" / "tlog"
PROOF_SCHEMA = "pi-operator-guard/proof/v1"


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


# The proof-file reader below composes the audit package's own checkpoint and proof checks in
# the order the format states (tlog spec, "Proof files"); it stands in until audit ships its
# proof-file models, and then only calls them.


def _malformed(detail: str) -> ProofError:
    return ProofError("proof-malformed", detail)


def _hash(value: Any) -> bytes:
    if not isinstance(value, str):
        raise _malformed("a hash is not a string")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _malformed("a hash is not base64") from None
    if len(raw) != 32 or base64.b64encode(raw).decode("ascii") != value:
        raise _malformed("a hash is not canonical base64 of 32 bytes")
    return raw


def _hashes(value: Any) -> list[bytes]:
    if not isinstance(value, list) or len(value) > 64:
        raise _malformed("hashes is not a list of at most 64")
    return [_hash(v) for v in value]


def _exact(obj: dict[str, Any], keys: set[str]) -> None:
    if set(obj) != keys:
        raise _malformed(f"expected exactly {sorted(keys)}")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _malformed("not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _malformed("a string holds a lone surrogate") from None
    return value


def _verify_proof_file(data: bytes, keys: list[NoteKey]) -> None:
    try:
        doc = load_json(data, max_bytes=16 << 20)
    except JsonInputError as exc:
        raise _malformed(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("schema") != PROOF_SCHEMA:
        raise _malformed("not a proof/v1 file")
    if doc.get("kind") == "inclusion":
        _exact(doc, {"schema", "kind", "checkpoint", "entries"})
        note = _text(doc["checkpoint"]).encode("utf-8")
        entries = doc["entries"]
        if not isinstance(entries, list) or not entries:
            raise _malformed("entries is not a non-empty list")
        signed = open_checkpoint(note, keys)
        for entry in entries:
            if not isinstance(entry, dict):
                raise _malformed("an entry is not an object")
            _exact(entry, {"leafIndex", "line", "hashes"})
            index = entry["leafIndex"]
            if type(index) is not int or index < 0:
                raise _malformed("leafIndex is not a non-negative integer")
            line = _text(entry["line"])
            path = _hashes(entry["hashes"])
            cp = signed.checkpoint
            verify_inclusion(index, cp.size, leaf_hash(line.encode("utf-8")), path, cp.root)
            try:
                record = load_json(line)
            except JsonInputError:
                record = None
            seq = record.get("seq") if isinstance(record, dict) else None
            if type(seq) is not int or seq != index:
                raise ProofError("leaf-mismatch", "the record's seq is not its leaf index")
    elif doc.get("kind") == "consistency":
        _exact(doc, {"schema", "kind", "old", "new", "hashes"})
        old_note = _text(doc["old"]).encode("utf-8")
        new_note = _text(doc["new"]).encode("utf-8")
        path = _hashes(doc["hashes"])
        older = open_checkpoint(old_note, keys).checkpoint
        newer = open_checkpoint(new_note, keys, origin=older.origin).checkpoint
        verify_consistency(older.size, newer.size, older.root, newer.root, path)
    else:
        raise _malformed("kind is neither inclusion nor consistency")


def proof_result(vector: dict[str, Any]) -> dict[str, Any]:
    try:
        keys = [NoteKey.from_vkey(v) for v in vector["keys"]]
        _verify_proof_file(vector["file"].encode("utf-8"), keys)
    except (NoteError, ProofError) as exc:
        return _rejected(exc.code)
    return _verified()
