"""``recover_log``: the operator's explicit way out of a log the appender refuses.

The appender never signs over a log that does not verify (see :mod:`audit._writing.log`), so a
damaged log stops every append, and the guard fails closed. Only the operator decides
to carry on: ``pi-guard audit recover --reason TEXT`` moves the damaged log (and its
head) aside, untouched, for the auditor, and starts a new log whose record 1 is a
``log.recovered`` record naming the old file, its size, the SHA-256 of its bytes,
the fault ``verify`` reported and the operator's reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path

from pydantic import BaseModel

from audit._checking.verify import FaultKind, verify_log
from audit._errors import LogWriteError, UsageError
from audit._records.chain import head_path_for
from audit._records.fields import MAX_OPERATOR_REASON_CHARS
from audit._records.read import read_records
from audit._records.wire import WIRE_CONFIG, format_iso, utc_now
from audit._redaction.redact import redact_preview
from audit._writing.log import AuditLog
from audit._writing.signing import HeadSigner, PublicKeys
from audit.tlog._tree import tree_path_for

__all__ = ["RecoveryResult", "recover_log"]


class RecoveryResult(BaseModel):
    """What :func:`recover_log` did: where the damaged log went and the new log's first records."""

    model_config = WIRE_CONFIG

    moved_to: str
    head_moved_to: str | None
    bytes: int
    sha256: str
    fault: FaultKind | None
    line: int | None
    previous_log_id: str | None
    log_id: str
    recovered_seq: int


def recover_log(
    path: str | os.PathLike[str],
    signer: HeadSigner,
    public_keys: PublicKeys,
    *,
    reason: str,
) -> RecoveryResult:
    """Move a log that does not verify aside and start a new one that records the move.

    Refuses (:class:`audit.UsageError`) a log that verifies intact, and an empty
    ``reason``. Raises :class:`audit.LogNotFoundError` if there is no log and
    :class:`audit.LogWriteError` if the log changes while it is being recovered.
    """
    log_path = Path(path)
    said = (
        redact_preview(reason, limit=MAX_OPERATOR_REASON_CHARS) if isinstance(reason, str) else ""
    )
    if not said:
        raise UsageError("reason", "say why the log is recovered", reason)
    keys = public_keys() if callable(public_keys) else public_keys
    checked = verify_log(log_path, keys)
    if checked.decision == "intact":
        raise UsageError("log", "verifies intact: nothing to recover", str(log_path))
    head_path = head_path_for(log_path)
    fd = os.open(log_path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # no appender can start while the log is moved
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            size += len(chunk)
        if size != checked.bytes:
            raise LogWriteError(log_path, "the log changed while it was being recovered; retry")
        moved = _free_name(log_path, "damaged")
        os.link(log_path, moved)  # fails rather than overwrite
        moved_head: Path | None = None
        if head_path.exists():
            moved_head = head_path_for(moved)
            os.link(head_path, moved_head)
            os.unlink(head_path)
        with contextlib.suppress(FileNotFoundError):
            tree_path_for(log_path).unlink()  # only a cache of the moved log's tree
        os.unlink(log_path)
        _fsync_dir(log_path.parent)
    except OSError as exc:
        raise LogWriteError(
            log_path, f"cannot move the damaged log aside: {exc.strerror}"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    data = {
        "quarantinedTo": moved.name,
        "bytes": size,
        "reason": "operator-recovery",
        "sha256": "sha256:" + digest.hexdigest(),
        **({"headMovedTo": moved_head.name} if moved_head is not None else {}),
        **({"previousLogId": checked.log_id} if checked.log_id else {}),
        **({"fault": checked.fault} if checked.fault else {}),
        **({"line": checked.line} if checked.line else {}),
        "operatorReason": said,
    }
    with AuditLog.open(log_path, signer, public_keys) as log:
        record = log._append_reserved("log.recovered", data)
    first = next(iter(read_records(log_path)))  # the generator closes its file when dropped
    return RecoveryResult(
        moved_to=moved.name,
        head_moved_to=None if moved_head is None else moved_head.name,
        bytes=size,
        sha256=data["sha256"],
        fault=checked.fault,
        line=checked.line,
        previous_log_id=checked.log_id,
        log_id=str(first.data["logId"]),
        recovered_seq=record.seq,
    )


def _free_name(path: Path, label: str) -> Path:
    stamp = format_iso(utc_now()).replace("-", "").replace(":", "")
    base = f"{path.name}.{label}-{stamp}"
    for attempt in range(1, 1000):
        candidate = path.with_name(base if attempt == 1 else f"{base}-{attempt}")
        if not candidate.exists() and not head_path_for(candidate).exists():
            return candidate
    raise LogWriteError(path, "cannot find a free name to move the damaged log to")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
