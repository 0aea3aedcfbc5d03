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

import audit
from audit import (
    MAX_NOTE_BYTES,
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
from audit._chain import check_body
from audit._errors import LineFault

verify_proof: Any = getattr(audit, "verify_proof", None)

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


# Proof files are read by ``audit.verify_proof`` when audit has it; until then by the stand-in
# below, which composes audit's own record, checkpoint and proof checks in the order the
# Python proof-file reader uses (so the vectors mean the same thing before and after).


def _malformed(detail: str) -> ProofError:
    return ProofError("proof-malformed", detail)


def _hash(value: str) -> bytes:
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _malformed("a hash is not base64") from None
    if len(raw) != 32 or base64.b64encode(raw).decode("ascii") != value:
        raise _malformed("a hash is not canonical base64 of 32 bytes")
    return raw


def _exact(obj: dict[str, Any], keys: set[str]) -> None:
    if set(obj) != keys:
        raise _malformed(f"expected exactly {sorted(keys)}")


def _text(value: Any, max_chars: int) -> str:
    if not isinstance(value, str) or len(value) > max_chars:
        raise _malformed("not a string, or too long")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _malformed("a string holds a lone surrogate") from None
    return value


def _strings(value: Any, max_items: int) -> list[str]:
    if not isinstance(value, list) or len(value) > max_items:
        raise _malformed("not a list, or too long")
    return [_text(v, 1 << 30) for v in value]


def _stand_in(raw: bytes, keys: list[NoteKey]) -> dict[str, Any]:
    doc = load_json(raw, max_bytes=16 << 20)
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or kind not in ("inclusion", "consistency"):
        raise _malformed("kind is neither inclusion nor consistency")
    if doc.get("schema") != PROOF_SCHEMA:
        raise _malformed("not a proof/v1 file")
    if kind == "inclusion":
        _exact(doc, {"schema", "kind", "checkpoint", "entries"})
        note = _text(doc["checkpoint"], MAX_NOTE_BYTES)
        entries = doc["entries"]
        if not isinstance(entries, list) or not 1 <= len(entries) <= 10_000:
            raise _malformed("entries is not a list of 1 to 10000")
        parsed = []
        for entry in entries:
            if not isinstance(entry, dict):
                raise _malformed("an entry is not an object")
            _exact(entry, {"leafIndex", "line", "hashes"})
            index = entry["leafIndex"]
            if type(index) is not int or not 0 <= index < 1 << 63:
                raise _malformed("leafIndex is not an integer in [0, 2**63)")
            parsed.append((index, _text(entry["line"], 256 * 1024), _strings(entry["hashes"], 64)))
        try:
            cp = open_checkpoint(note.encode("utf-8"), keys).checkpoint
        except NoteError as exc:
            return _invalid(exc.code)
        reasons: list[str] = []
        for index, line, hashes in parsed:
            try:
                body = line.encode("utf-8")
                rec = check_body(body)
                if rec["seq"] != index:
                    raise ProofError("leaf-mismatch", "the record's seq is not its leaf index")
                path = [_hash(h) for h in hashes]
                verify_inclusion(index, cp.size, leaf_hash(body), path, cp.root)
            except LineFault as fault:
                reasons.append(f"record-{fault.kind}")
            except ProofError as exc:
                reasons.append(exc.code)
        if reasons:
            return {"decision": "invalid", "reasons": list(dict.fromkeys(reasons))}
        return _valid()
    _exact(doc, {"schema", "kind", "old", "new", "hashes"})
    old_note = _text(doc["old"], MAX_NOTE_BYTES)
    new_note = _text(doc["new"], MAX_NOTE_BYTES)
    hashes = _strings(doc["hashes"], 128)
    try:
        newer = open_checkpoint(new_note.encode("utf-8"), keys).checkpoint
        older = open_checkpoint(old_note.encode("utf-8"), keys, origin=newer.origin).checkpoint
    except NoteError as exc:
        return _invalid(exc.code)
    try:
        path = [_hash(h) for h in hashes]
        verify_consistency(older.size, newer.size, older.root, newer.root, path)
    except ProofError as exc:
        return _invalid(exc.code)
    return _valid()


def _valid() -> dict[str, Any]:
    return {"decision": "valid", "reasons": []}


def _invalid(code: str) -> dict[str, Any]:
    return {"decision": "invalid", "reasons": [code]}


def proof_result(vector: dict[str, Any]) -> dict[str, Any]:
    """``valid`` / ``invalid`` with the reasons, or ``malformed`` for what is no proof file."""
    try:
        keys = [NoteKey.from_vkey(v) for v in vector["keys"]]
    except NoteError as exc:
        return _invalid(exc.code)
    raw = vector["file"].encode("utf-8")
    try:
        if verify_proof is None:
            return _stand_in(raw, keys)
        check = verify_proof(raw, keys)
    except (JsonInputError, ProofError) as exc:
        return {"decision": "malformed", "reasons": [exc.code]}
    return {"decision": check.decision, "reasons": list(check.reasons)}
