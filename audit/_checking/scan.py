"""One pass over a log's lines: the chain checks and the Merkle tree, in one or more processes.

Each line is checked by :func:`audit._records.chain.check_body` (canonical form and own hash),
followed along the chain (``seq`` and ``prev``) and hashed into the tree. With
``workers`` > 1 a large log is cut at line boundaries into one piece per worker;
each piece reports its leaf-level facts (first and last record, the perfect subtrees
it covers, its first fault) and the pieces are joined here, so the result is the same
as one pass: the same first fault, the same root.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import threading
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, cast

from audit._errors import LogLineError
from audit._records.chain import Chain, check_parts
from audit.tlog._merkle import Frontier, leaf_hash, node_hash

if TYPE_CHECKING:
    from collections.abc import Callable

    from audit._checking.faults import FaultKind
    from audit.tlog._tree import TreeState

__all__ = ["PARALLEL_MIN_BYTES", "Scan", "scan_log"]

_PROGRESS_EVERY = 8192  # lines
_sha256 = hashlib.sha256
PARALLEL_MIN_BYTES = 64 << 20
"""Below this a log is checked in one process: starting workers costs more than it saves."""


@dataclass
class Scan:
    """What one pass found. ``records`` counts the lines that checked out."""

    records: int = 0
    fault: tuple[FaultKind, int | None, str] | None = None
    log_id: str | None = None
    last_seq: int | None = None
    last_hash: str | None = None
    last_line: int = 0
    first_line: int = 1
    frontier: Frontier = field(default_factory=Frontier)
    mark_root: bytes | None = None

    @property
    def tree_size(self) -> int | None:
        return None if self.fault is not None else self.frontier.size

    @property
    def root(self) -> bytes | None:
        return None if self.fault is not None else self.frontier.root()

    def root_b64(self) -> str | None:
        root = self.root
        return None if root is None else base64.b64encode(root).decode("ascii")


def scan_log(
    stream: IO[bytes],
    size: int,
    *,
    resume: TreeState | None = None,
    mark: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    path: str | None = None,
    parallel_min_bytes: int = PARALLEL_MIN_BYTES,
) -> Scan:
    """Check the first ``size`` bytes of ``stream``; note the root at ``mark`` records.

    ``resume`` starts at its offset with its frontier (the chain resumes unchecked at
    that record). Faults are reported with 1-based line numbers.
    """
    start = 0 if resume is None else resume.offset
    first_seq = 0 if resume is None else resume.frontier.size
    frontier = Frontier() if resume is None else resume.frontier.copy()
    if workers > 1 and path is not None and size - start >= parallel_min_bytes:
        return _scan_parallel(path, size, start, first_seq, frontier, mark, workers)
    scan = Scan(first_line=first_seq + 1, frontier=frontier)
    if mark is not None and frontier.size == mark:
        scan.mark_root = frontier.root()
    chain = Chain(first_seq)
    done = start
    if start:
        stream.seek(start)
    line_no = first_seq
    if size > start:
        for raw in stream:
            line = raw
            line_no += 1
            done += len(line)
            if done > size:
                line = line[: len(line) - (done - size)]
                done = size
            try:
                if line[-1:] != b"\n":
                    raise LogLineError("torn-line", "the last line has no line feed")
                body = line[:-1]
                chain.accept_parts(*check_parts(body))
            except LogLineError as bad:
                scan.fault = (cast("FaultKind", bad.kind), line_no, bad.detail)
                break
            frontier.append(_sha256(b"\x00" + body).digest())  # the leaf hash
            if frontier.size == mark:
                scan.mark_root = frontier.root()
            scan.records += 1
            if progress is not None and scan.records % _PROGRESS_EVERY == 0:
                progress(done, size)
            if done >= size:
                break
    scan.last_line = line_no if scan.fault is None else line_no - 1
    scan.log_id = chain.log_id
    if chain.next_seq > first_seq:
        scan.last_seq = chain.next_seq - 1
        scan.last_hash = chain.prev
    return scan


# -- parallel --------------------------------------------------------------------------


@dataclass
class _Piece:
    """What a worker found in bytes ``[start, end)``."""

    records: int = 0
    first: dict[str, Any] | None = None
    last_seq: int | None = None
    last_hash: str | None = None
    log_id: str | None = None
    fault: tuple[str, int, str] | None = None  # kind, index of the line in the piece, detail
    # perfect subtrees by (first leaf, size): enough to rebuild any root over the piece
    subtrees: list[tuple[int, int, bytes]] = field(default_factory=list)


def _check_piece(path: str, start: int, end: int, first_seq: int, mark: int | None) -> _Piece:
    """Worker: check the lines in ``[start, end)`` of the log at ``path``.

    ``first_seq`` is the seq the first line must have if every piece before is whole;
    the join re-checks the boundary, so a wrong guess only costs a fault there.
    """
    piece = _Piece()
    chain: Chain | None = None
    index = -1
    leaves: list[bytes] = []
    with open(path, "rb", buffering=1 << 20) as stream:
        stream.seek(start)
        done = start
        for raw in stream:
            line = raw
            index += 1
            done += len(line)
            if done > end:
                line = line[: len(line) - (done - end)]
                done = end
            try:
                if line[-1:] != b"\n":
                    raise LogLineError("torn-line", "the last line has no line feed")
                body = line[:-1]
                parts = check_parts(body)
                if chain is None:
                    piece.first = {"seq": parts[0], "prev": parts[3], "event": parts[1]}
                    chain = Chain(first_seq)
                chain.accept_parts(*parts)
            except LogLineError as bad:
                piece.fault = (bad.kind, index, bad.detail)
                break
            leaves.append(leaf_hash(body))
            piece.records += 1
            if done >= end:
                break
    if chain is not None:
        piece.log_id = chain.log_id
        if chain.next_seq > first_seq:
            piece.last_seq = chain.next_seq - 1
            piece.last_hash = chain.prev
    if mark is not None and first_seq < mark < first_seq + len(leaves):
        # cut the blocks at the mark, so the root of the first ``mark`` leaves can be built
        cut = mark - first_seq
        piece.subtrees = _perfect_subtrees(leaves[:cut], first_seq) + _perfect_subtrees(
            leaves[cut:], mark
        )
    else:
        piece.subtrees = _perfect_subtrees(leaves, first_seq)
    return piece


def _perfect_subtrees(leaves: list[bytes], offset: int) -> list[tuple[int, int, bytes]]:
    """Cover leaves ``offset .. offset+len`` with maximal aligned perfect subtrees."""
    out: list[tuple[int, int, bytes]] = []
    pos = 0
    n = len(leaves)
    while pos < n:
        absolute = offset + pos
        size = absolute & -absolute if absolute else 1 << (n - pos).bit_length()
        while size > n - pos:
            size >>= 1
        level = leaves[pos : pos + size]
        while len(level) > 1:
            level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
        out.append((absolute, size, level[0]))
        pos += size
    return out


def _cut_points(path: str, start: int, size: int, parts: int) -> list[int]:
    """Byte offsets that split ``[start, size)`` into ``parts`` pieces at line starts."""
    cuts = [start]
    with open(path, "rb") as stream:
        for i in range(1, parts):
            target = start + (size - start) * i // parts
            if target <= cuts[-1]:
                continue
            stream.seek(target)
            stream.readline()
            at = stream.tell()
            if cuts[-1] < at < size:
                cuts.append(at)
    cuts.append(size)
    return cuts


def _scan_parallel(
    path: str,
    size: int,
    start: int,
    first_seq: int,
    frontier: Frontier,
    mark: int | None,
    workers: int,
) -> Scan:
    cuts = _cut_points(path, start, size, workers)
    # Each piece must know the seq of its first line to place its leaves in the tree:
    # count lines (cheap next to checking them) so every worker gets its exact offset.
    seqs = [first_seq]
    with open(path, "rb", buffering=0) as counter:
        for a, b in itertools.pairwise(cuts[:-1]):
            counter.seek(a)
            lines = 0
            left = b - a
            while left > 0:
                block = counter.read(min(left, 1 << 20))
                if not block:
                    break
                lines += block.count(b"\n")
                left -= len(block)
            seqs.append(seqs[-1] + lines)
    # Imported here: only a scan in several processes needs them (not every verify).
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_all_start_methods, get_context

    # fork: nothing to re-import in the workers (the CLI has one thread); with other
    # threads running a fork could copy a held lock, so a fresh forkserver then.
    single = threading.active_count() == 1 and "fork" in get_all_start_methods()
    context = get_context("fork" if single else "forkserver")
    with ProcessPoolExecutor(max_workers=len(seqs), mp_context=context) as pool:
        futures = [
            pool.submit(_check_piece, path, a, b, s, mark)
            for a, b, s in zip(cuts, cuts[1:], seqs, strict=False)
        ]
        pieces = [f.result() for f in futures]
    return _join(pieces, seqs, first_seq, frontier, mark)


def _join(
    pieces: list[_Piece], seqs: list[int], first_seq: int, frontier: Frontier, mark: int | None
) -> Scan:
    scan = Scan(first_line=first_seq + 1, frontier=frontier)
    subtrees: dict[tuple[int, int], bytes] = {}
    prev_hash: str | None = None
    prev_seq = first_seq - 1
    for piece, seq0 in zip(pieces, seqs, strict=True):
        if piece.first is not None and seq0 > first_seq:
            # the boundary: this piece's first record must continue the previous piece
            if piece.first["seq"] != prev_seq + 1:
                scan.fault = (
                    "seq-mismatch",
                    seq0 + 1,
                    f"expected seq {prev_seq + 1}, found {piece.first['seq']}",
                )
                break
            if piece.first["prev"] != prev_hash:
                scan.fault = (
                    "prev-mismatch",
                    seq0 + 1,
                    f"prev is not the hash of record {prev_seq}",
                )
                break
        for start, size, h in piece.subtrees:
            subtrees[(start, size)] = h
        scan.records += piece.records
        if piece.log_id is not None:
            scan.log_id = piece.log_id
        if piece.last_seq is not None:
            prev_seq, prev_hash = piece.last_seq, piece.last_hash
        if piece.fault is not None:
            kind, index, detail = piece.fault
            scan.fault = (cast("FaultKind", kind), seq0 + index + 1, detail)
            break
    total = first_seq + scan.records
    scan.last_line = total
    if total > first_seq:
        scan.last_seq = prev_seq
        scan.last_hash = prev_hash
    if scan.fault is None:
        scan.frontier = _frontier_from(frontier, subtrees, total)
    if mark is not None and first_seq <= mark <= total:
        scan.mark_root = _frontier_from(frontier, subtrees, mark).root()
    return scan


def _frontier_from(base: Frontier, subtrees: dict[tuple[int, int], bytes], size: int) -> Frontier:
    """The frontier of ``[0, size)`` from ``base`` (the first records) and the pieces' subtrees."""
    known = dict(subtrees)
    pos = 0
    for bit, h in zip(_sizes(base.size), base.hashes, strict=True):
        known[(pos, bit)] = h
        pos += bit
    hashes: list[bytes] = []
    pos = 0
    for bit in _sizes(size):
        hashes.append(_subtree(pos, bit, known))
        pos += bit
    return Frontier(size, hashes)


def _sizes(n: int) -> list[int]:
    """The set bits of ``n``, largest first: the sizes of its frontier's subtrees."""
    return [1 << b for b in range(n.bit_length() - 1, -1, -1) if n >> b & 1]


def _subtree(start: int, size: int, known: dict[tuple[int, int], bytes]) -> bytes:
    found = known.get((start, size))
    if found is not None:
        return found
    if size == 1:
        raise LogLineError("malformed-line", f"leaf {start} is missing from the pieces")
    half = size // 2
    return node_hash(_subtree(start, half, known), _subtree(start + half, half, known))
