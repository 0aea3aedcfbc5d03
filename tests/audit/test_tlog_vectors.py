"""The shared verifiable-log vectors (tests/vectors/tlog/, see its README) through ``audit``.

The TypeScript verifier runs the same files (tests/verifier/); both must reach the stated
decision and reason code on every vector.
"""

from __future__ import annotations

from typing import Any

import pytest

from audit import ProofError
from audit.tlog import (
    EMPTY_ROOT,
    leaf_hash,
    node_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)
from tests.audit.tlog_vectors import checkpoint_result, load, proof_result

MERKLE = load("merkle-rfc6962.json")
CHECKPOINTS = load("checkpoints.json")["vectors"]
PROOFS = load("proofs.json")["vectors"]


def test_rfc6962_hasher_known_answers() -> None:
    known = MERKLE["hasher"]
    assert EMPTY_ROOT.hex() == known["emptyRoot"]
    assert leaf_hash(b"").hex() == known["emptyLeafHash"]
    assert leaf_hash(bytes.fromhex(known["leafHash"]["leafHex"])).hex() == known["leafHash"]["hash"]
    node = known["nodeHash"]
    assert (
        node_hash(bytes.fromhex(node["leftHex"]), bytes.fromhex(node["rightHex"])).hex()
        == node["hash"]
    )


def test_reference_tree_leaf_hashes_and_every_root() -> None:
    tree = MERKLE["tree"]
    leaves = [leaf_hash(bytes.fromhex(x)) for x in tree["leafInputsHex"]]
    assert [h.hex() for h in leaves] == tree["leafHashesHex"]
    assert len(tree["rootsHex"]) == len(leaves) + 1 == 9
    for size, root in enumerate(tree["rootsHex"]):
        assert root_of(leaves[:size]).hex() == root, size


def _ok(check: Any) -> bool:
    try:
        check()
    except ProofError:
        return False
    return True


# Go's RootFromInclusionProof refuses a leaf hash that is not 32 bytes; so does
# audit.tlog.verify_inclusion ("single-entry/empty-root-and-leaf": an empty leaf hash and an empty
# root in a tree of one).


def _inclusion_probes() -> list[Any]:
    return [pytest.param(p, id=p["id"]) for p in MERKLE["inclusion"]]


@pytest.mark.parametrize("probe", _inclusion_probes())
def test_reference_inclusion_probes(probe: dict[str, Any]) -> None:
    proof = [bytes.fromhex(h) for h in probe["proofHex"]]
    leaf, root = bytes.fromhex(probe["leafHashHex"]), bytes.fromhex(probe["rootHex"])
    assert (
        _ok(lambda: verify_inclusion(probe["leafIndex"], probe["treeSize"], leaf, proof, root))
        is probe["valid"]
    )


@pytest.mark.parametrize("probe", MERKLE["consistency"], ids=lambda p: p["id"])
def test_reference_consistency_probes(probe: dict[str, Any]) -> None:
    proof = [bytes.fromhex(h) for h in probe["proofHex"]]
    r1, r2 = bytes.fromhex(probe["root1Hex"]), bytes.fromhex(probe["root2Hex"])
    assert (
        _ok(lambda: verify_consistency(probe["size1"], probe["size2"], r1, r2, proof))
        is probe["valid"]
    )


def test_the_reference_probes_are_all_there() -> None:
    assert len(MERKLE["inclusion"]) == 98
    assert len(MERKLE["consistency"]) == 98
    assert sum(p["valid"] for p in MERKLE["inclusion"]) >= 5


@pytest.mark.parametrize("vector", CHECKPOINTS, ids=lambda v: v["id"])
def test_checkpoint_vectors(vector: dict[str, Any]) -> None:
    assert checkpoint_result(vector) == vector["expected"]


@pytest.mark.parametrize("vector", PROOFS, ids=lambda v: v["id"])
def test_proof_vectors(vector: dict[str, Any]) -> None:
    assert proof_result(vector) == vector["expected"]
