"""``verify_log``: check a log end to end with only the log, its head and the public keys."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TextIO, cast, get_args

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ValidationError

from audit._chain import MAX_HEAD_BYTES, Chain, check_body, open_snapshot
from audit._errors import JsonInputError, LineFault
from audit._models import AuditHead
from audit._wire import WIRE_CONFIG, b64url_decode, load_json

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "ProgressCallback",
    "VerifyDecision",
    "VerifyResult",
    "check_head",
    "tty_progress",
    "verify_log",
]

ProgressCallback = Callable[[int, int], None]
"""Called with ``(bytes_done, bytes_total)`` while a log is read."""

VerifyDecision = Literal["intact", "tampered", "unanchored"]
FaultKind = Literal[
    "torn-line",
    "malformed-line",
    "hash-mismatch",
    "seq-mismatch",
    "prev-mismatch",
    "genesis-invalid",
    "records-missing-at-end",
    "records-after-head",
    "head-mismatch",
    "head-missing",
    "head-malformed",
    "head-unknown-key",
    "head-signature-invalid",
    "log-replaced",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
"""Every fault kind ``verify_log`` or :class:`audit.LogIntegrityError` can name."""

_PROGRESS_EVERY = 8192  # lines


class VerifyResult(BaseModel):
    """What ``verify_log`` found. ``line`` is 1-based; ``None`` when the fault is in the head.

    ``decision`` is ``intact`` only when every line checks out and a head signed by a
    known key names the last line. Without a head file it is ``unanchored`` (never
    ``intact``); :attr:`exit_code` is 0 for it only if ``allow_unanchored`` was given.
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
) -> VerifyResult:
    """Recompute every hash, check ``seq`` and ``prev``, and check the signed head.

    Detects an edit of any byte, inserted, deleted, reordered or duplicated lines,
    a truncated suffix (down to one line or one byte) and a forged head. It cannot
    detect a rollback of log *and* head together to an older signed state; keep a
    copy of the head elsewhere for that. Raises :class:`audit.LogNotFoundError` if
    there is no log file.
    """
    log_path = Path(path)
    stream, size, head_raw = open_snapshot(log_path, with_head=True)
    chain = Chain()
    records = 0
    done = 0
    fault: tuple[FaultKind, int | None, str] | None = None
    last_line_no = 0
    with stream:
        if size > 0:
            for raw in stream:
                line = raw
                records += 1
                done += len(line)
                if done > size:
                    line = line[: len(line) - (done - size)]
                    done = size
                try:
                    if line[-1:] != b"\n":
                        raise LineFault("torn-line", "the last line has no line feed")
                    chain.accept(check_body(line[:-1]))
                except LineFault as bad:
                    fault = (cast(FaultKind, bad.kind), records, bad.detail)
                    break
                if progress is not None and records % _PROGRESS_EVERY == 0:
                    progress(done, size)
                if done >= size:
                    break
        last_line_no = records
        if fault is not None:
            records -= 1
    if progress is not None:
        progress(size, size)

    last_seq = chain.next_seq - 1 if chain.next_seq > 0 else None
    head, head_faults, head_detail = check_head(head_raw, public_keys)
    reasons: list[FaultKind] = []
    if fault is not None:
        reasons.append(fault[0])
    reasons.extend(head_faults)

    if fault is None and head is not None and not head_faults:
        if last_seq is None or head.seq > last_seq:
            shown = "the log is empty" if last_seq is None else f"it ends at record {last_seq}"
            fault = (
                "records-missing-at-end",
                last_line_no + 1,
                f"the head names record {head.seq} but {shown}: lines were cut from the end",
            )
        elif head.seq < last_seq:
            fault = (
                "records-after-head",
                head.seq + 2,
                f"records {head.seq + 1}..{last_seq} are not covered by the signed head",
            )
        elif head.hash != chain.prev:
            fault = ("head-mismatch", last_line_no, "the head's hash differs from the last line")
        if fault is not None:
            reasons.append(fault[0])
    if fault is None and head_faults:
        fault = (head_faults[0], None, head_detail)

    decision: VerifyDecision
    if fault is None:
        decision = "intact"
        detail = f"{records} records intact, head signed by {head.key_id if head else '?'}"
    elif fault[0] == "head-missing":
        decision = "unanchored"
        detail = fault[2]
    else:
        decision = "tampered"
        detail = fault[2]
    return VerifyResult(
        decision=decision,
        fault=None if fault is None else fault[0],
        line=None if fault is None else fault[1],
        detail=detail,
        reasons=tuple(reasons),
        records=records,
        bytes=size,
        log_id=chain.log_id,
        last_seq=last_seq,
        last_hash=chain.prev if last_seq is not None else None,
        head_seq=None if head is None else head.seq,
        head_key_id=None if head is None else head.key_id,
        allow_unanchored=allow_unanchored,
    )


def check_head(
    raw: bytes | None, public_keys: Mapping[str, Ed25519PublicKey]
) -> tuple[AuditHead | None, list[FaultKind], str]:
    """The parsed head if its signature checks out, else the faults found."""
    if raw is None:
        return None, ["head-missing"], "there is no signed head file: the log is unanchored"
    if len(raw) > MAX_HEAD_BYTES:
        return None, ["head-malformed"], "the head file is too large"
    try:
        head = AuditHead.model_validate(load_json(raw, max_bytes=MAX_HEAD_BYTES))
    except (JsonInputError, ValidationError):
        return None, ["head-malformed"], "the head file is not a valid head"
    public = public_keys.get(head.key_id)
    if public is None:
        return None, ["head-unknown-key"], f"the head is signed by an unknown key {head.key_id}"
    signature = b64url_decode(head.signature, 64)
    try:
        if signature is None:
            raise InvalidSignature
        public.verify(signature, head.signing_payload())
    except InvalidSignature:
        return None, ["head-signature-invalid"], "the head's signature does not verify"
    return head, [], ""


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
