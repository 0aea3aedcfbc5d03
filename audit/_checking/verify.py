"""``verify_log``: check a log end to end with only the log, its head and the public keys.

Per record: its own hash, ``seq`` and ``prev`` (:mod:`audit._checking.scan`), and its leaf in the
Merkle tree. At the end the tree must have the size and root the signed checkpoint head
names, and, given an earlier checkpoint (``against``), the log must extend it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TextIO, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel

from audit._checking.faults import FAULT_KINDS, FaultKind
from audit._checking.scan import Scan, scan_log
from audit._errors import LogLineError, NoteError
from audit._records.chain import MAX_HEAD_BYTES, open_snapshot
from audit._records.wire import WIRE_CONFIG
from audit.tlog._note import ORIGIN_PREFIX, Checkpoint, open_checkpoint, origin_for
from audit.tlog._tree import HeadView, TreeState

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "ProgressCallback",
    "VerifyDecision",
    "VerifyResult",
    "tty_progress",
    "verify_log",
]

ProgressCallback = Callable[[int, int], None]
"""Called with ``(bytes_done, bytes_total)`` while a log is read."""

VerifyDecision = Literal["intact", "tampered", "unanchored"]

_Fault = tuple[FaultKind, int | None, str]


class VerifyResult(BaseModel):
    """What ``verify_log`` found. ``line`` is 1-based; ``None`` when the fault is in the head.

    ``decision`` is ``intact`` only when every line checks out and a head signed by a
    known key names the whole log. Without a head file it is ``unanchored`` (never
    ``intact``); :attr:`exit_code` is 0 for it only if ``allow_unanchored`` was given.
    ``root`` is the base64 Merkle root of the records read (``None`` after a bad line);
    ``firstLine`` is the first line read (1 unless resumed from a checkpoint).
    """

    model_config = WIRE_CONFIG

    decision: VerifyDecision
    fault: FaultKind | None
    line: int | None
    detail: str
    reasons: tuple[FaultKind, ...]
    records: int
    bytes: int
    log_id: str | None
    last_seq: int | None
    last_hash: str | None
    head_seq: int | None
    head_key_id: str | None
    tree_size: int | None
    root: str | None
    against_size: int | None
    first_line: int
    allow_unanchored: bool

    @property
    def exit_code(self) -> int:
        """0 intact (or unanchored when allowed), 4 tampered or unanchored."""
        if self.decision == "intact":
            return 0
        if self.decision == "unanchored" and self.allow_unanchored:
            return 0
        return 4


def verify_log(
    path: str | os.PathLike[str],
    public_keys: Mapping[str, Ed25519PublicKey],
    *,
    allow_unanchored: bool = False,
    progress: ProgressCallback | None = None,
    against: bytes | None = None,
    resume: TreeState | None = None,
    workers: int = 1,
) -> VerifyResult:
    """Recompute every hash, check ``seq`` and ``prev``, the Merkle root and the signed head.

    Detects an edit of any byte, inserted, deleted, reordered or duplicated lines,
    a truncated suffix (down to one line or one byte) and a forged head. A rollback
    of log *and* head together to an older signed state is caught only with
    ``against``: an earlier signed checkpoint (kept where the log's writer cannot
    rewrite it) that the log must extend (``rolled-back`` if the log is now shorter,
    ``checkpoint-fork`` if its first records now hash to another root).

    ``resume`` (with ``against``) starts at the checkpoint instead of the first record:
    the frontier of the records before its last one and the offset where that one
    starts. Only that record and the ones after it are read; the checkpoint's signed
    root vouches for the rest. ``workers`` > 1 checks a large log in that many processes.
    Raises :class:`audit.LogNotFoundError` if there is no log file.
    """
    keys = dict(public_keys)
    anchor: Checkpoint | None = None
    anchor_fault: _Fault | None = None
    if against is not None:
        try:
            anchor = open_checkpoint(against, keys).checkpoint
        except NoteError as exc:
            anchor_fault = ("checkpoint-untrusted", None, f"the earlier checkpoint: {exc}")
    if resume is not None and (anchor is None or resume.frontier.size + 1 != anchor.size):
        resume = None  # a state that does not fit the checkpoint is not used
    stream, size, head_raw = open_snapshot(Path(path), with_head=True)
    mark = None if anchor is None else anchor.size
    with stream:
        scan = scan_log(
            stream, size, resume=resume, mark=mark, progress=progress, workers=workers,
            path=str(path),
        )  # fmt: skip
        if resume is not None and anchor is not None and scan.mark_root != anchor.root:
            # The state does not lead to the checkpoint's root (stale, damaged or forged,
            # or the log changed there): it proves nothing, so read the whole log.
            stream.seek(0)
            scan = scan_log(
                stream, size, mark=mark, progress=progress, workers=workers, path=str(path)
            )
    if progress is not None:
        progress(size, size)
    if resume is not None and anchor is not None and scan.log_id is None:
        scan.log_id = anchor.origin.removeprefix(ORIGIN_PREFIX)
    origin = None if scan.log_id is None else origin_for(scan.log_id)
    head, head_fault = _read_head(head_raw, keys, origin)

    fault = scan.fault
    reasons: list[FaultKind] = [] if fault is None else [fault[0]]
    if head_fault is not None:
        reasons.append(head_fault[0])
    if fault is None and head is not None:
        fault = _compare_head(head, scan)
        if fault is not None:
            reasons.append(fault[0])
    # An earlier checkpoint is judged before a missing head: a log cut back behind it is
    # tampered, never merely "unanchored".
    if fault is None and anchor_fault is not None:
        fault = anchor_fault
        reasons.append(fault[0])
    if fault is None and anchor is not None:
        fault = _compare_anchor(anchor, scan, origin)
        if fault is not None:
            reasons.append(fault[0])
    if fault is None:
        fault = head_fault

    decision: VerifyDecision
    if fault is None:
        decision = "intact"
        detail = f"{scan.records} records intact, head signed by {head.key_id if head else '?'}"
        if anchor is not None:
            detail += f"; extends the checkpoint of {anchor.size} records"
    elif fault[0] == "head-missing":
        decision, detail = "unanchored", fault[2]
    else:
        decision, detail = "tampered", fault[2]
    return VerifyResult(
        decision=decision,
        fault=None if fault is None else fault[0],
        line=None if fault is None else fault[1],
        detail=detail,
        reasons=tuple(reasons),
        records=scan.records,
        bytes=size,
        log_id=scan.log_id,
        last_seq=scan.last_seq,
        last_hash=scan.last_hash,
        head_seq=None if head is None else head.seq,
        head_key_id=None if head is None else head.key_id,
        tree_size=scan.tree_size,
        root=scan.root_b64(),
        against_size=None if anchor is None else anchor.size,
        first_line=scan.first_line,
        allow_unanchored=allow_unanchored,
    )


def _read_head(
    raw: bytes | None, keys: Mapping[str, Ed25519PublicKey], origin: str | None
) -> tuple[HeadView | None, _Fault | None]:
    if raw is None:
        return None, ("head-missing", None, "there is no signed head file: the log is unanchored")
    if len(raw) > MAX_HEAD_BYTES:
        return None, ("head-malformed", None, "the head file is too large")
    try:
        return HeadView.parse(raw, keys, origin), None
    except LogLineError as bad:
        return None, (cast(FaultKind, bad.kind), None, bad.detail)


def _compare_head(head: HeadView, scan: Scan) -> _Fault | None:
    """The head must name the last record (and, as a checkpoint, the whole tree)."""
    last_seq = scan.last_seq
    if last_seq is None or head.seq > last_seq:
        shown = "the log is empty" if last_seq is None else f"it ends at record {last_seq}"
        return (
            "records-missing-at-end",
            scan.last_line + 1,
            f"the head names record {head.seq} but {shown}: lines were cut from the end",
        )
    if head.seq < last_seq:
        return (
            "records-after-head",
            head.seq + 2,
            f"records {head.seq + 1}..{last_seq} are not covered by the signed head",
        )
    if head.hash is not None and head.hash != scan.last_hash:
        return ("head-mismatch", scan.last_line, "the head's hash differs from the last line")
    if head.checkpoint is not None and head.checkpoint.root != scan.root:
        return (
            "root-mismatch",
            None,
            "the records hash to another Merkle root than the signed checkpoint names",
        )
    return None


def _compare_anchor(anchor: Checkpoint, scan: Scan, origin: str | None) -> _Fault | None:
    """The log must extend the earlier checkpoint: same log, at least as long, same prefix."""
    if origin is not None and anchor.origin != origin:
        return ("checkpoint-untrusted", None, "the earlier checkpoint is of another log")
    if scan.tree_size is not None and scan.tree_size < anchor.size:
        return (
            "rolled-back",
            None,
            f"the log has {scan.tree_size} records but a signed checkpoint of it had "
            f"{anchor.size}: it was rolled back or truncated",
        )
    if scan.mark_root != anchor.root:
        return (
            "checkpoint-fork",
            None,
            f"the first {anchor.size} records no longer hash to the root of the earlier "
            "checkpoint: the log was rewritten (a fork)",
        )
    return None


def tty_progress(
    stream: TextIO | None = None, *, label: str = "verifying audit log"
) -> ProgressCallback | None:
    """A progress printer for ``verify_log(progress=...)``, or ``None`` if not a TTY.

    Writes ``\\r<label>: 42% (12.0/28.6 MiB)`` to ``stream`` (default stderr) at most
    a few times a second, and ends the line when done.
    """
    out = sys.stderr if stream is None else stream
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - last[0] < 0.2:
            return
        last[0] = now
        percent = 100 if total == 0 else done * 100 // total
        mib = 1024 * 1024
        out.write(f"\r{label}: {percent:3d}% ({done / mib:.1f}/{total / mib:.1f} MiB)")
        if finished:
            out.write("\n")
        out.flush()

    return show
