"""The appender's check that the whole log up to its signed head is intact.

A process checks this before its first append and again whenever the log changed under
it (:mod:`audit._writing.log` compares the file's identity, size and times with what it last
wrote). Nothing from the guard's home is trusted for it: the ``<log>.tree`` cache sits
beside the log and a hand that edits one can edit the other.

For a checkpoint head every line up to the head's record is hashed into the Merkle tree,
whose root must be the one the signed checkpoint names: that is a SHA-256 per line and
no JSON parsing. Given an anchored checkpoint (kept outside the home, see
:class:`audit.AnchorDir`) whose tree state leads to its signed root on this file, only
the lines from that checkpoint's last record on are read; the anchor vouches for the
ones before it. A legacy JSON head names only the last record's hash, so such a log is
checked link by link from record 0.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from audit._errors import LogIntegrityError, LogLineError
from audit._records.chain import Chain, check_parts, pread_exact
from audit.tlog._anchor import Anchored
from audit.tlog._merkle import Frontier, leaf_hash
from audit.tlog._tree import HeadView

__all__ = ["checked_frontier"]

_READ_CHUNK = 1 << 20
_MAX_LINE = 256 * 1024


def checked_frontier(
    fd: int, path: Path, head: HeadView, end: int, anchor: Anchored | None
) -> Frontier:
    """The frontier of records ``[0, head.seq]``, whose lines are bytes ``[0, end)``.

    Raises :class:`audit.LogIntegrityError` when those lines are not the ones the head
    signs: a changed byte, a line removed, added or moved, a chain recomputed.
    """
    size = head.seq + 1
    if head.checkpoint is None:
        return _chain_frontier(fd, path, size, end)
    frontier = None if anchor is None else _from_anchor(fd, anchor, end)
    if frontier is None:
        frontier = _extend(fd, path, Frontier(), 0, end)
    if frontier.size != size:
        raise LogIntegrityError(
            path,
            "head-mismatch",
            f"the head names {size} records but {frontier.size} lines lead to its record",
        )
    if frontier.root() != head.checkpoint.root:
        raise LogIntegrityError(
            path,
            "root-mismatch",
            "the records do not hash to the root the signed checkpoint names: a record was changed",
        )
    return frontier


def _from_anchor(fd: int, anchor: Anchored, end: int) -> Frontier | None:
    """The frontier after the anchored checkpoint's records, extended to ``end``; ``None``
    when the anchor's tree state does not lead to its signed root on this file (then the
    caller reads the whole log)."""
    state = anchor.state
    if state is None or state.frontier.size + 1 != anchor.checkpoint.size or state.offset >= end:
        return None
    first = pread_exact(fd, min(_MAX_LINE, end - state.offset), state.offset)
    cut = first.find(b"\n")
    if cut < 0:
        return None
    frontier = state.frontier.copy()
    frontier.append(leaf_hash(first[:cut]))
    if frontier.root() != anchor.checkpoint.root:
        return None
    try:
        return _extend_raw(fd, frontier, state.offset + cut + 1, end)
    except LogLineError:
        return None


def _extend(fd: int, path: Path, frontier: Frontier, start: int, end: int) -> Frontier:
    try:
        return _extend_raw(fd, frontier, start, end)
    except LogLineError as fault:
        raise LogIntegrityError(path, fault.kind, fault.detail) from None


def _extend_raw(fd: int, frontier: Frontier, start: int, end: int) -> Frontier:
    """``frontier`` extended by the lines in bytes ``[start, end)``, each ending with LF.

    :func:`audit.tlog._tree.extend_frontier` with the leaf and node hashing inlined: this loop
    is what a session start waits for on a large log without an anchor.
    """
    sha = hashlib.sha256
    hashes = list(frontier.hashes)
    count = frontier.size
    pending = b""
    offset = start
    while offset < end:
        chunk = os.pread(fd, min(_READ_CHUNK, end - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            h = sha(b"\x00" + line).digest()
            bits = count
            while bits & 1:
                h = sha(b"\x01" + hashes.pop() + h).digest()
                bits >>= 1
            hashes.append(h)
            count += 1
    if pending or offset < end:
        raise LogLineError("torn-line", "a line before the head's record has no line feed")
    return Frontier(count, hashes)


def _chain_frontier(fd: int, path: Path, size: int, end: int) -> Frontier:
    """Every line checked and linked from record 0 (a legacy head signs only the last hash;
    the caller already matched that hash to the line that ends at ``end``)."""
    chain = Chain()
    frontier = Frontier()
    pending = b""
    offset = 0
    line_no = 0
    try:
        while offset < end:
            chunk = os.pread(fd, min(_READ_CHUNK, end - offset), offset)
            if not chunk:
                break
            offset += len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                line_no += 1
                chain.accept_parts(*check_parts(line))
                frontier.append(leaf_hash(line))
        if pending or offset < end:
            raise LogLineError("torn-line", "a line before the head's record has no line feed")
    except LogLineError as fault:
        raise LogIntegrityError(path, fault.kind, f"line {line_no}: {fault.detail}") from None
    if frontier.size != size:
        raise LogIntegrityError(
            path,
            "head-mismatch",
            f"the head names {size} records but {frontier.size} lines lead to its record",
        )
    return frontier
