"""Proof files an auditor checks with nothing but a public key (docs/auditor.md, "Proofs").

An inclusion proof file holds a signed checkpoint and, per record, the record's exact
line and its audit path (RFC 9162 section 2.1.3). A consistency proof file holds two
signed checkpoints of one log and the proof that the newer extends the older (section
2.1.4). Hashes are standard base64, like the root in a checkpoint.

>>> InclusionProof.model_json_schema()["properties"]["kind"]["const"]
'inclusion'
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from audit._errors import LogLineError, NoteError, ProofError
from audit._records.chain import check_body, open_snapshot
from audit._records.wire import WIRE_CONFIG, load_json
from audit.tlog._merkle import (
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from audit.tlog._note import MAX_NOTE_BYTES, NoteKey, SignedCheckpoint, open_checkpoint

__all__ = [
    "PROOF_SCHEMA",
    "ConsistencyProof",
    "EntryCheck",
    "InclusionEntry",
    "InclusionProof",
    "ProofCheck",
    "log_leaves",
    "parse_vkeys",
    "prove_consistency",
    "prove_records",
    "records_about",
    "verify_proof",
]

PROOF_SCHEMA = "pi-operator-guard/proof/v1"
MAX_PROOF_BYTES = 16 * 1024 * 1024
_Hash = str
_Note = str


class InclusionEntry(BaseModel):
    """One record: its exact line (without LF) and the hashes from its leaf to the root."""

    model_config = WIRE_CONFIG

    leaf_index: int = Field(ge=0, lt=1 << 63)
    line: str = Field(max_length=256 * 1024)
    hashes: tuple[_Hash, ...] = Field(max_length=64)


class InclusionProof(BaseModel):
    """Records of a log and their inclusion in the tree a signed checkpoint names."""

    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/proof/v1"] = Field(alias="schema")
    kind: Literal["inclusion"]
    checkpoint: _Note = Field(max_length=MAX_NOTE_BYTES)
    entries: tuple[InclusionEntry, ...] = Field(min_length=1, max_length=10_000)


class ConsistencyProof(BaseModel):
    """Two signed checkpoints of one log and the proof that ``new`` extends ``old``."""

    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/proof/v1"] = Field(alias="schema")
    kind: Literal["consistency"]
    old: _Note = Field(max_length=MAX_NOTE_BYTES)
    new: _Note = Field(max_length=MAX_NOTE_BYTES)
    hashes: tuple[_Hash, ...] = Field(max_length=128)


class EntryCheck(BaseModel):
    """What one inclusion entry proved: the record's seq, event and evidence id if any."""

    model_config = WIRE_CONFIG

    leaf_index: int
    valid: bool
    reason: str | None
    event: str | None
    evidence_id: str | None


class ProofCheck(BaseModel):
    """The verdict on a proof file: ``valid`` only if the signature and every proof hold."""

    model_config = WIRE_CONFIG

    decision: Literal["valid", "invalid"]
    kind: Literal["inclusion", "consistency"]
    reasons: tuple[str, ...]
    detail: str
    origin: str | None
    tree_size: int | None
    old_size: int | None
    entries: tuple[EntryCheck, ...]

    @property
    def exit_code(self) -> int:
        """0 valid, 4 invalid (like ``audit verify``)."""
        return 0 if self.decision == "valid" else 4


def _b64(text: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ProofError("proof-malformed", "a hash is not standard base64") from None
    if len(raw) != 32 or base64.b64encode(raw).decode("ascii") != text:
        raise ProofError("proof-malformed", "a hash is not 32 bytes in canonical base64")
    return raw


def _b64s(hashes: Sequence[bytes]) -> tuple[str, ...]:
    return tuple(base64.b64encode(h).decode("ascii") for h in hashes)


def log_leaves(path: str | Path) -> tuple[list[bytes], list[bytes]]:
    """Every line of the log (without LF) and its leaf hash, as the tree sees them."""
    stream, size, _ = open_snapshot(Path(path), with_head=False)
    with stream:
        data = stream.read(size)
    lines = data.split(b"\n")
    if lines[-1]:
        raise ProofError("leaf-mismatch", "the log's last line is torn: verify it first")
    lines.pop()
    return lines, [leaf_hash(line) for line in lines]


def records_about(lines: Sequence[bytes], evidence_id: str) -> list[int]:
    """Indexes of the records about ``evidence_id``: every record naming it, and the
    ``confirmation.requested`` that asked for it (the closest one before the recorded
    record with the same tool, payload hash and tool call id)."""
    needle = evidence_id.encode("utf-8")
    found: list[int] = []
    for index, line in enumerate(lines):
        if needle in line and json.loads(line)["data"].get("evidenceId") == evidence_id:
            found.append(index)
    for index in list(found):
        rec = json.loads(lines[index])
        if rec["event"] != "confirmation.recorded":
            continue
        data = rec["data"]
        for back in range(index - 1, -1, -1):
            if b"confirmation.requested" not in lines[back]:
                continue
            asked = json.loads(lines[back])
            other = asked["data"]
            if asked["event"] == "confirmation.requested" and all(
                other.get(k) == data.get(k) for k in ("toolName", "payloadHash", "toolCallId")
            ):
                found.append(back)
                break
        break
    return sorted(set(found))


def prove_records(
    lines: Sequence[bytes], leaves: Sequence[bytes], note: bytes, indexes: Sequence[int]
) -> InclusionProof:
    """An inclusion proof of the records at ``indexes`` against the checkpoint ``note``.

    ``note`` must name exactly the tree of ``leaves`` (the caller verified both).
    """
    entries = tuple(
        InclusionEntry(
            leaf_index=i,
            line=lines[i].decode("utf-8"),
            hashes=_b64s(inclusion_proof(leaves, i)),
        )
        for i in indexes
    )
    return InclusionProof(
        schema=PROOF_SCHEMA, kind="inclusion", checkpoint=note.decode("utf-8"), entries=entries
    )


def prove_consistency(
    leaves: Sequence[bytes], old_note: bytes, old_size: int, new_note: bytes
) -> ConsistencyProof:
    """The proof that the tree of ``leaves`` (named by ``new_note``) extends ``old_note``."""
    return ConsistencyProof(
        schema=PROOF_SCHEMA,
        kind="consistency",
        old=old_note.decode("utf-8"),
        new=new_note.decode("utf-8"),
        hashes=_b64s(consistency_proof(leaves, old_size)),
    )


def verify_proof(raw: bytes, keys: Sequence[NoteKey]) -> ProofCheck:
    """Check a proof file with the log's verifier key(s) only.

    Raises :class:`audit.JsonInputError` or :class:`audit.ProofError` (``proof-malformed``)
    when ``raw`` is not a proof file; returns ``invalid`` with reason codes when it is
    one that does not hold.
    """
    data = load_json(raw, max_bytes=MAX_PROOF_BYTES)
    kind = data.get("kind") if isinstance(data, dict) else None
    try:
        if kind == "inclusion":
            # camelCase only: the wire has one spelling of each field (not the Python names).
            proof = InclusionProof.model_validate_json(raw, by_alias=True, by_name=False)
            return _verify_inclusion_file(proof, keys)
        if kind == "consistency":
            other = ConsistencyProof.model_validate_json(raw, by_alias=True, by_name=False)
            return _verify_consistency_file(other, keys)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise ProofError("proof-malformed", f"{where}: {first['msg']}") from None
    raise ProofError("proof-malformed", 'not a proof file ("kind" is not inclusion/consistency)')


def _invalid(kind: Literal["inclusion", "consistency"], code: str, detail: str) -> ProofCheck:
    return ProofCheck(
        decision="invalid",
        kind=kind,
        reasons=(code,),
        detail=detail,
        origin=None,
        tree_size=None,
        old_size=None,
        entries=(),
    )


def _open(note: str, keys: Sequence[NoteKey], origin: str | None = None) -> SignedCheckpoint:
    return open_checkpoint(note.encode("utf-8"), keys, origin=origin)


def _verify_inclusion_file(proof: InclusionProof, keys: Sequence[NoteKey]) -> ProofCheck:
    try:
        signed = _open(proof.checkpoint, keys)
    except NoteError as exc:
        return _invalid("inclusion", exc.code, f"the checkpoint: {exc.detail}")
    checkpoint = signed.checkpoint
    checks: list[EntryCheck] = []
    reasons: list[str] = []
    for entry in proof.entries:
        reason: str | None = None
        event = evidence = None
        try:
            body = entry.line.encode("utf-8")
            rec = check_body(body)
            event = rec["event"]
            found = rec["data"].get("evidenceId")
            evidence = found if isinstance(found, str) else None
            if rec["seq"] != entry.leaf_index:
                raise ProofError("leaf-mismatch", "the record's seq is not its leaf index")
            hashes = [_b64(h) for h in entry.hashes]
            verify_inclusion(
                entry.leaf_index, checkpoint.size, leaf_hash(body), hashes, checkpoint.root
            )
        except LogLineError as fault:
            reason = f"record-{fault.kind}"
        except ProofError as exc:
            reason = exc.code
        if reason is not None:
            reasons.append(reason)
        checks.append(
            EntryCheck(
                leaf_index=entry.leaf_index,
                valid=reason is None,
                reason=reason,
                event=event,
                evidence_id=evidence,
            )
        )
    bad = len(reasons)
    return ProofCheck(
        decision="valid" if not bad else "invalid",
        kind="inclusion",
        reasons=tuple(dict.fromkeys(reasons)),
        detail=(
            f"{len(checks)} record(s) are in the tree of {checkpoint.size} signed by "
            f"{signed.signer.name}"
            if not bad
            else f"{bad} of {len(checks)} record(s) are not proven in the signed tree"
        ),
        origin=checkpoint.origin,
        tree_size=checkpoint.size,
        old_size=None,
        entries=tuple(checks),
    )


def _verify_consistency_file(proof: ConsistencyProof, keys: Sequence[NoteKey]) -> ProofCheck:
    try:
        new = _open(proof.new, keys).checkpoint
        old = _open(proof.old, keys, origin=new.origin).checkpoint
    except NoteError as exc:
        return _invalid("consistency", exc.code, f"a checkpoint: {exc.detail}")
    try:
        hashes = [_b64(h) for h in proof.hashes]
        verify_consistency(old.size, new.size, old.root, new.root, hashes)
    except ProofError as exc:
        check = _invalid("consistency", exc.code, exc.detail)
        return check.model_copy(
            update={"origin": new.origin, "tree_size": new.size, "old_size": old.size}
        )
    return ProofCheck(
        decision="valid",
        kind="consistency",
        reasons=(),
        detail=f"the tree of {new.size} extends the tree of {old.size} ({new.origin})",
        origin=new.origin,
        tree_size=new.size,
        old_size=old.size,
        entries=(),
    )


def parse_vkeys(text: str) -> list[NoteKey]:
    """Verifier keys, one per line (blank lines and ``#`` comments skipped)."""
    keys = [
        NoteKey.from_vkey(line)
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not keys:
        raise NoteError("vkey-malformed", "no verifier key given")
    return keys
