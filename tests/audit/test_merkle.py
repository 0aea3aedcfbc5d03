"""RFC 9162 Merkle tree: known answers, proofs for every (index, size), and broken proofs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit import ProofError
from audit.tlog import (
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

# The leaves and roots of the Certificate Transparency reference implementation's
# Merkle tree tests (RFC 6962 / RFC 9162 hashing), trees of 1..8 leaves.
RFC_LEAVES = [
    bytes.fromhex(x)
    for x in ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
              "606162636465666768696a6b6c6d6e6f"]
]  # fmt: skip
RFC_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def _leaves(n: int) -> list[bytes]:
    return [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


def test_empty_tree_root_is_the_hash_of_nothing() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert Frontier().root() == EMPTY_ROOT


@pytest.mark.parametrize("size", range(1, 9))
def test_roots_match_the_reference_implementation(size: int) -> None:
    hashes = [leaf_hash(leaf) for leaf in RFC_LEAVES[:size]]
    assert root_of(hashes).hex() == RFC_ROOTS[size - 1]


def test_leaf_and_node_hashes_are_domain_separated() -> None:
    assert leaf_hash(b"").hex() == RFC_ROOTS[0]
    a, b = leaf_hash(b"a"), leaf_hash(b"b")
    assert node_hash(a, b) != leaf_hash(a + b)
    assert node_hash(a, b) != node_hash(b, a)


def test_frontier_keeps_one_hash_per_set_bit() -> None:
    frontier = Frontier()
    for i, leaf in enumerate(_leaves(1000), start=1):
        frontier.append(leaf)
        assert frontier.size == i
        assert len(frontier.hashes) == i.bit_count()
    assert frontier.root() == root_of(_leaves(1000))


def test_frontier_refuses_a_wrong_number_of_hashes() -> None:
    with pytest.raises(ProofError) as caught:
        Frontier(3, [b"\x00" * 32])
    assert caught.value.code == "frontier-malformed"
    with pytest.raises(ProofError):
        Frontier(1, [b"\x00" * 31])


@pytest.mark.parametrize("size", range(1, 40))
def test_every_inclusion_proof_verifies_and_no_other_leaf_does(size: int) -> None:
    leaves = _leaves(size)
    root = root_of(leaves)
    for index in range(size):
        proof = inclusion_proof(leaves, index)
        verify_inclusion(index, size, leaves[index], proof, root)
        other = leaf_hash(b"not a leaf")
        with pytest.raises(ProofError):
            verify_inclusion(index, size, other, proof, root)
        if size > 1:
            with pytest.raises(ProofError):
                verify_inclusion((index + 1) % size, size, leaves[index], proof, root)


@pytest.mark.parametrize("size", range(1, 34))
def test_every_consistency_proof_verifies(size: int) -> None:
    leaves = _leaves(size)
    root = root_of(leaves)
    for m in range(1, size + 1):
        proof = consistency_proof(leaves, m)
        verify_consistency(m, size, root_of(leaves[:m]), root, proof)


def test_a_fork_fails_consistency() -> None:
    leaves = _leaves(10)
    forked = [*leaves[:4], leaf_hash(b"forged"), *leaves[5:]]
    proof = consistency_proof(forked, 6)
    with pytest.raises(ProofError) as caught:
        verify_consistency(6, 10, root_of(leaves[:6]), root_of(leaves), proof)
    assert caught.value.code in {"old-root-mismatch", "root-mismatch"}


def test_a_rollback_has_no_consistency() -> None:
    with pytest.raises(ProofError) as caught:
        verify_consistency(8, 5, b"\x00" * 32, b"\x00" * 32, [])
    assert caught.value.code == "size-out-of-range"


def test_equal_sizes_need_equal_roots_and_an_empty_proof() -> None:
    leaves = _leaves(5)
    root = root_of(leaves)
    verify_consistency(5, 5, root, root, [])
    with pytest.raises(ProofError):
        verify_consistency(5, 5, root, leaf_hash(b"x"), [])
    with pytest.raises(ProofError):
        verify_consistency(5, 5, root, root, [root])


def test_an_empty_proof_between_different_sizes_fails() -> None:
    leaves = _leaves(8)
    with pytest.raises(ProofError) as caught:
        verify_consistency(4, 8, root_of(leaves[:4]), root_of(leaves), [])
    assert caught.value.code == "proof-too-short"


@given(st.integers(1, 300), st.data())
def test_truncated_or_extended_proofs_fail(size: int, data: st.DataObject) -> None:
    leaves = _leaves(size)
    root = root_of(leaves)
    index = data.draw(st.integers(0, size - 1))
    proof = inclusion_proof(leaves, index)
    verify_inclusion(index, size, leaves[index], proof, root)
    with pytest.raises(ProofError):
        verify_inclusion(index, size, leaves[index], [*proof, root], root)
    if proof:
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaves[index], proof[:-1], root)
        flip = data.draw(st.integers(0, len(proof) - 1))
        bad = list(proof)
        bad[flip] = bytes([bad[flip][0] ^ 1]) + bad[flip][1:]
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaves[index], bad, root)
    m = data.draw(st.integers(1, size))
    cproof = consistency_proof(leaves, m)
    if cproof:
        bad = list(cproof)
        bad[0] = leaf_hash(b"forged")
        with pytest.raises(ProofError):
            verify_consistency(m, size, root_of(leaves[:m]), root, bad)
        with pytest.raises(ProofError):
            verify_consistency(m, size, root_of(leaves[:m]), root, cproof[:-1])


def test_hashes_of_the_wrong_length_are_refused() -> None:
    leaves = _leaves(3)
    root = root_of(leaves)
    proof = inclusion_proof(leaves, 2)
    for bad in ([*proof[:-1], proof[-1][:31]], [b""]):
        with pytest.raises(ProofError) as caught:
            verify_inclusion(2, 3, leaves[2], bad, root)
        assert caught.value.code == "proof-malformed"
    with pytest.raises(ProofError):
        verify_inclusion(0, 1, b"", [], b"")
    with pytest.raises(ProofError):
        verify_consistency(1, 3, leaves[0][:16], root, consistency_proof(leaves, 1))


def _error(call: object) -> tuple[str, str]:
    try:
        call()  # type: ignore[operator]
    except ProofError as exc:
        return exc.code, exc.detail
    raise AssertionError("no ProofError")


def test_every_refusal_has_its_code_and_its_words() -> None:
    # The codes are the contract (proof files and verify-proof report them); the words
    # are what an operator reads. Both are pinned, one refusal at a time.
    leaves = _leaves(5)
    root = root_of(leaves)
    proof = inclusion_proof(leaves, 2)
    cproof = consistency_proof(leaves, 3)
    old = root_of(leaves[:3])
    short = b"\x00" * 31
    expected = {
        "inclusion_proof past the end": (
            lambda: inclusion_proof(leaves, 5),
            ("index-out-of-range", "leaf 5 is not in a tree of 5"),
        ),
        "inclusion_proof negative": (
            lambda: inclusion_proof(leaves, -1),
            ("index-out-of-range", "leaf -1 is not in a tree of 5"),
        ),
        "consistency_proof from 0": (
            lambda: consistency_proof(leaves, 0),
            ("size-out-of-range", "no consistency proof from 0 to 5"),
        ),
        "consistency_proof past the end": (
            lambda: consistency_proof(leaves, 6),
            ("size-out-of-range", "no consistency proof from 6 to 5"),
        ),
        "verify_inclusion index": (
            lambda: verify_inclusion(5, 5, leaves[0], proof, root),
            ("index-out-of-range", "leaf 5 is not in a tree of 5"),
        ),
        "verify_inclusion short leaf": (
            lambda: verify_inclusion(2, 5, short, proof, root),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_inclusion short root": (
            lambda: verify_inclusion(2, 5, leaves[2], proof, short),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_inclusion short proof hash": (
            lambda: verify_inclusion(2, 5, leaves[2], [*proof[:-1], short], root),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_inclusion too long": (
            lambda: verify_inclusion(2, 5, leaves[2], [*proof, root], root),
            ("proof-too-long", "the inclusion proof has extra hashes"),
        ),
        "verify_inclusion too short": (
            lambda: verify_inclusion(2, 5, leaves[2], proof[:-1], root),
            ("proof-too-short", "the inclusion proof is missing hashes"),
        ),
        "verify_inclusion other root": (
            lambda: verify_inclusion(2, 5, leaves[3], proof, root),
            ("root-mismatch", "the inclusion proof leads to a different root"),
        ),
        "verify_consistency rollback": (
            lambda: verify_consistency(6, 5, old, root, cproof),
            ("size-out-of-range", "no consistency from size 6 to size 5"),
        ),
        "verify_consistency from 0": (
            lambda: verify_consistency(0, 5, old, root, cproof),
            ("size-out-of-range", "no consistency from size 0 to size 5"),
        ),
        "verify_consistency equal with a proof": (
            lambda: verify_consistency(5, 5, root, root, [root]),
            ("proof-too-long", "equal sizes need an empty proof"),
        ),
        "verify_consistency equal, other roots": (
            lambda: verify_consistency(5, 5, root, old, []),
            ("root-mismatch", "equal sizes with different roots: a fork"),
        ),
        "verify_consistency empty": (
            lambda: verify_consistency(3, 5, old, root, []),
            ("proof-too-short", "the consistency proof is empty"),
        ),
        "verify_consistency short old root": (
            lambda: verify_consistency(3, 5, short, root, cproof),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_consistency short new root": (
            lambda: verify_consistency(3, 5, old, short, cproof),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_consistency short proof hash": (
            lambda: verify_consistency(3, 5, old, root, [*cproof[:-1], short]),
            ("proof-malformed", "a hash is not 32 bytes"),
        ),
        "verify_consistency too long": (
            lambda: verify_consistency(3, 5, old, root, [*cproof, root]),
            ("proof-too-long", "the consistency proof has extra hashes"),
        ),
        "verify_consistency too short": (
            lambda: verify_consistency(3, 5, old, root, cproof[:-1]),
            ("proof-too-short", "the consistency proof is missing hashes"),
        ),
        "verify_consistency other old root": (
            lambda: verify_consistency(3, 5, root_of([*leaves[:2], root]), root, cproof),
            ("old-root-mismatch", "the proof does not lead to the old root"),
        ),
        "verify_consistency other new root": (
            lambda: verify_consistency(3, 5, old, old, cproof),
            ("root-mismatch", "the proof does not lead to the new root"),
        ),
        "frontier count": (
            lambda: Frontier(3, [root]),
            ("frontier-malformed", "1 hashes cannot cover 3 leaves"),
        ),
        "frontier hash size": (
            lambda: Frontier(1, [short]),
            ("frontier-malformed", "a frontier hash is not 32 bytes"),
        ),
    }
    for name, (call, want) in expected.items():
        assert _error(call) == want, name


def test_frontiers_are_equal_only_in_size_and_every_hash() -> None:
    a = Frontier()
    for leaf in _leaves(5):
        a.append(leaf)
    assert a == a.copy()
    assert a != Frontier(4, [a.hashes[0]])
    other = a.copy()
    other.hashes[1] = leaf_hash(b"x")
    assert a != other
    assert Frontier(1, [a.hashes[1]]) != Frontier(4, [*[a.hashes[1]][:0], a.hashes[0]])
    assert a != "not a frontier"
