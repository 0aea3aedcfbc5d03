"""The transparency log over the audit log: Merkle trees, checkpoints, proofs and anchors.

Every record line is a leaf of an RFC 9162 Merkle tree; the log's signed head is a C2SP
signed-note checkpoint of that tree. This face is for what works on the tree rather than
on the records (``pi-guard audit checkpoint|prove|prove-consistency|verify-proof|anchor``,
the anchors of a home, independent verifiers):

* Merkle primitives: :func:`leaf_hash`, :func:`node_hash`, :func:`root_of`,
  :class:`Frontier` (the tree grown one leaf at a time), :func:`inclusion_proof`,
  :func:`consistency_proof` and their ``verify_*``;
* checkpoints: :class:`Checkpoint`, :func:`sign_checkpoint`, :func:`open_checkpoint`,
  :func:`parse_checkpoint`, :class:`NoteKey` (a vkey), :func:`origin_for`;
* proof files: :func:`prove_records`, :func:`prove_consistency`, :func:`verify_proof`;
* anchors (checkpoints kept outside the home): :class:`AnchorDir`;
* the tree cache beside a log: :class:`TreeState`, :func:`read_tree_state`.

Errors are :class:`audit.NoteError` and :class:`audit.ProofError`, in ``audit``'s one
exception tree. Builds on the record line only; imports nothing of the appender or verify.
"""

import typing

from audit._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from audit.tlog._anchor import (
        AnchorDir,
        Anchored,
    )
    from audit.tlog._merkle import (
        EMPTY_ROOT,
        Frontier,
        consistency_proof,
        inclusion_proof,
        leaf_hash,
        node_hash,
        root_of,
        verify_consistency,
        verify_inclusion,
    )
    from audit.tlog._note import (
        MAX_NOTE_BYTES,
        ORIGIN_PREFIX,
        Checkpoint,
        NoteKey,
        NoteSignature,
        SignedCheckpoint,
        open_checkpoint,
        origin_for,
        parse_checkpoint,
        sign_checkpoint,
    )
    from audit.tlog._proofs import (
        PROOF_SCHEMA,
        ConsistencyProof,
        EntryCheck,
        InclusionEntry,
        InclusionProof,
        ProofCheck,
        log_leaves,
        parse_vkeys,
        prove_consistency,
        prove_records,
        records_about,
        verify_proof,
    )
    from audit.tlog._tree import (
        TreeState,
        read_tree_state,
    )

__all__ = [
    "EMPTY_ROOT",
    "MAX_NOTE_BYTES",
    "ORIGIN_PREFIX",
    "PROOF_SCHEMA",
    "AnchorDir",
    "Anchored",
    "Checkpoint",
    "ConsistencyProof",
    "EntryCheck",
    "Frontier",
    "InclusionEntry",
    "InclusionProof",
    "NoteKey",
    "NoteSignature",
    "ProofCheck",
    "SignedCheckpoint",
    "TreeState",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "log_leaves",
    "node_hash",
    "open_checkpoint",
    "origin_for",
    "parse_checkpoint",
    "parse_vkeys",
    "prove_consistency",
    "prove_records",
    "read_tree_state",
    "records_about",
    "root_of",
    "sign_checkpoint",
    "verify_consistency",
    "verify_inclusion",
    "verify_proof",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "AnchorDir": "audit.tlog._anchor",
    "Anchored": "audit.tlog._anchor",
    "EMPTY_ROOT": "audit.tlog._merkle",
    "Frontier": "audit.tlog._merkle",
    "consistency_proof": "audit.tlog._merkle",
    "inclusion_proof": "audit.tlog._merkle",
    "leaf_hash": "audit.tlog._merkle",
    "node_hash": "audit.tlog._merkle",
    "root_of": "audit.tlog._merkle",
    "verify_consistency": "audit.tlog._merkle",
    "verify_inclusion": "audit.tlog._merkle",
    "Checkpoint": "audit.tlog._note",
    "MAX_NOTE_BYTES": "audit.tlog._note",
    "NoteKey": "audit.tlog._note",
    "NoteSignature": "audit.tlog._note",
    "ORIGIN_PREFIX": "audit.tlog._note",
    "SignedCheckpoint": "audit.tlog._note",
    "open_checkpoint": "audit.tlog._note",
    "origin_for": "audit.tlog._note",
    "parse_checkpoint": "audit.tlog._note",
    "sign_checkpoint": "audit.tlog._note",
    "ConsistencyProof": "audit.tlog._proofs",
    "EntryCheck": "audit.tlog._proofs",
    "InclusionEntry": "audit.tlog._proofs",
    "InclusionProof": "audit.tlog._proofs",
    "PROOF_SCHEMA": "audit.tlog._proofs",
    "ProofCheck": "audit.tlog._proofs",
    "log_leaves": "audit.tlog._proofs",
    "parse_vkeys": "audit.tlog._proofs",
    "prove_consistency": "audit.tlog._proofs",
    "prove_records": "audit.tlog._proofs",
    "records_about": "audit.tlog._proofs",
    "verify_proof": "audit.tlog._proofs",
    "TreeState": "audit.tlog._tree",
    "read_tree_state": "audit.tlog._tree",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
