"""The Merkle tree over audit records (RFC 9162 section 2.1), its proofs and its frontier.

Leaves are the exact bytes of each record line without its LF. Hashes (section 2.1.1):

* leaf: ``SHA-256(0x00 || leaf bytes)``
* node: ``SHA-256(0x01 || left || right)``
* the tree of ``n`` leaves splits at the largest power of two below ``n``.

:class:`Frontier` keeps the roots of the perfect subtrees that cover ``[0, n)`` (at
most ``log2(n) + 1`` hashes), so appending a leaf and computing the root stay
``O(log n)`` in time and in what is kept. Proofs are generated from the list of
leaf hashes (section 2.1.3.1, 2.1.4.1) and verified with the algorithms of
section 2.1.3.2 and 2.1.4.2.

>>> f = Frontier()
>>> f.append(leaf_hash(b"a")); f.append(leaf_hash(b"b"))
>>> f.root() == node_hash(leaf_hash(b"a"), leaf_hash(b"b"))
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from audit._errors import ProofError

__all__ = [
    "EMPTY_ROOT",
    "Frontier",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root_of",
    "verify_consistency",
    "verify_inclusion",
]

_sha256 = hashlib.sha256
EMPTY_ROOT = _sha256(b"").digest()
"""MTH({}) (RFC 9162 section 2.1.1): the hash of the empty string."""


def leaf_hash(data: bytes) -> bytes:
    """``SHA-256(0x00 || data)``."""
    return _sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``."""
    return _sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (``n >= 2``)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaves: Sequence[bytes]) -> bytes:
    """MTH over already-hashed leaves."""
    frontier = Frontier()
    for leaf in leaves:
        frontier.append(leaf)
    return frontier.root()


def _subtree(leaves: Sequence[bytes], start: int, end: int) -> bytes:
    if end - start == 1:
        return leaves[start]
    k = _split(end - start)
    return node_hash(_subtree(leaves, start, start + k), _subtree(leaves, start + k, end))


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """PATH(index, D[0:n]) (RFC 9162 section 2.1.3.1), leaf-side hash first."""
    n = len(leaves)
    if not 0 <= index < n:
        raise ProofError("index-out-of-range", f"leaf {index} is not in a tree of {n}")
    path: list[bytes] = []
    start, end = 0, n
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            path.append(_subtree(leaves, start + k, end))
            end = start + k
        else:
            path.append(_subtree(leaves, start, start + k))
            start += k
    path.reverse()
    return path


def consistency_proof(leaves: Sequence[bytes], m: int) -> list[bytes]:
    """PROOF(m, D[0:n]) (RFC 9162 section 2.1.4.1); empty when ``m == n``."""
    n = len(leaves)
    if not 0 < m <= n:
        raise ProofError("size-out-of-range", f"no consistency proof from {m} to {n}")
    return _subproof(leaves, m, 0, n, True)


def _subproof(leaves: Sequence[bytes], m: int, start: int, end: int, whole: bool) -> list[bytes]:
    n = end - start
    if m == n:
        return [] if whole else [_subtree(leaves, start, end)]
    k = _split(n)
    if m <= k:
        return [*_subproof(leaves, m, start, start + k, whole), _subtree(leaves, start + k, end)]
    return [*_subproof(leaves, m - k, start + k, end, False), _subtree(leaves, start, start + k)]


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 section 2.1.3.2; raises :class:`audit.ProofError` unless ``leaf`` is at
    ``index`` in the tree of ``size`` leaves whose root is ``root``."""
    if not 0 <= index < size:
        raise ProofError("index-out-of-range", f"leaf {index} is not in a tree of {size}")
    if len(leaf) != 32 or len(root) != 32 or any(len(p) != 32 for p in proof):
        raise ProofError("proof-malformed", "a hash is not 32 bytes")
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            raise ProofError("proof-too-long", "the inclusion proof has extra hashes")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("proof-too-short", "the inclusion proof is missing hashes")
    if r != root:
        raise ProofError("root-mismatch", "the inclusion proof leads to a different root")


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 section 2.1.4.2; raises :class:`audit.ProofError` unless the tree of
    ``new_size`` leaves with ``new_root`` extends the one of ``old_size`` with ``old_root``."""
    if old_size < 1 or old_size > new_size:
        raise ProofError(
            "size-out-of-range", f"no consistency from size {old_size} to size {new_size}"
        )
    if old_size == new_size:
        if proof:
            raise ProofError("proof-too-long", "equal sizes need an empty proof")
        if old_root != new_root:
            raise ProofError("root-mismatch", "equal sizes with different roots: a fork")
        return
    if not proof:
        raise ProofError("proof-too-short", "the consistency proof is empty")
    if len(old_root) != 32 or len(new_root) != 32 or any(len(p) != 32 for p in proof):
        raise ProofError("proof-malformed", "a hash is not 32 bytes")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("proof-too-long", "the consistency proof has extra hashes")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("proof-too-short", "the consistency proof is missing hashes")
    if fr != old_root:
        raise ProofError("old-root-mismatch", "the proof does not lead to the old root")
    if sr != new_root:
        raise ProofError("root-mismatch", "the proof does not lead to the new root")


class Frontier:
    """The compact range ``[0, size)``: one hash per set bit of ``size``, largest first.

    ``hashes[i]`` is the root of a perfect subtree; their sizes are the set bits of
    ``size`` from the highest down, so they tile the leaves left to right.
    """

    __slots__ = ("hashes", "size")

    def __init__(self, size: int = 0, hashes: Iterable[bytes] = ()) -> None:
        self.size = size
        self.hashes = list(hashes)
        if size < 0 or len(self.hashes) != size.bit_count():
            raise ProofError(
                "frontier-malformed", f"{len(self.hashes)} hashes cannot cover {size} leaves"
            )
        if any(len(h) != 32 for h in self.hashes):
            raise ProofError("frontier-malformed", "a frontier hash is not 32 bytes")

    def copy(self) -> Frontier:
        return Frontier(self.size, self.hashes)

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash: merge equal-sized subtrees like a binary counter."""
        hashes = self.hashes
        h = leaf
        size = self.size
        while size & 1:
            h = _sha256(b"\x01" + hashes.pop() + h).digest()
            size >>= 1
        hashes.append(h)
        self.size += 1

    def root(self) -> bytes:
        """MTH of the ``size`` leaves: fold the subtrees right to left."""
        if not self.hashes:
            return EMPTY_ROOT
        hashes = self.hashes
        r = hashes[-1]
        for h in reversed(hashes[:-1]):
            r = _sha256(b"\x01" + h + r).digest()
        return r

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Frontier) and self.size == other.size and self.hashes == other.hashes
        )

    def __repr__(self) -> str:
        return f"Frontier(size={self.size}, hashes={len(self.hashes)})"
