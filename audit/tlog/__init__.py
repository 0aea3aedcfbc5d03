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

from audit.tlog._anchor import AnchorDir, Anchored
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
from audit.tlog._tree import TreeState, read_tree_state

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
