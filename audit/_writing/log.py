"""The appender: a hash-chained JSONL log with a signed head, safe across processes.

Commit protocol of one append, all under an exclusive ``flock`` on the log:

1. check the tail against the signed head (recovering from a crash if needed);
2. build the record, sign the new head (nothing is written if signing fails);
3. write the whole line with ``O_APPEND`` and ``fsync`` the log;
4. replace ``<log>.head`` atomically: temp file, ``fsync``, ``rename``, ``fsync`` of the
   directory. Only then does :meth:`AuditLog.append` return.

The head is the commit point, and it is verified before it is extended: its
signature must check out against the trusted public keys, the line before the
head's record must be the record it chains from, and after the head's record
only what one crashed append can leave is accepted:

* a torn final line (bytes after the last line feed), or
* exactly one complete record that chains from the head's record (a crash
  between the ``fsync`` of the line and the replacement of the head).

Those are moved to ``<log>.torn-<timestamp>``, the log is truncated back to the
head, and a ``log.recovered`` record says what was moved. Anything else (a head
with a bad signature or an unknown key, two or more records after the head, a
record after it that does not chain, a log shorter than its head) cannot come
from a crash: the appender raises :class:`audit.LogIntegrityError` and never
signs over it. Only the operator's ``pi-guard audit recover`` (:func:`audit.log.recover_log`)
moves such a log aside, and it records what it did in the new log.

Before its first append, and whenever the file is not as this process last left it
(another inode, size or time), a process also checks every line up to the head's record
against the signed head (:mod:`audit._writing.integrity`): an edit in the middle of the log is
refused like a cut at its end.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import secrets
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, overload

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit._errors import (
    LogClosedError,
    LogIntegrityError,
    LogLineError,
    LogWriteError,
    RecordTooLargeError,
    ReservedEventError,
    UnknownEventError,
    UsageError,
)
from audit._records.canonical import canonical_json, sha256_prefixed
from audit._records.chain import (
    MAX_HEAD_BYTES,
    Chain,
    check_body,
    head_path_for,
    lines_backward,
    pread_exact,
)
from audit._records.models import (
    KNOWN_EVENTS,
    LOG_SCHEMA,
    RESERVED_EVENTS,
    AuditRecord,
    EventData,
    event_of,
    genesis_hash,
)
from audit._records.wire import format_iso, utc_now
from audit._writing import files
from audit._writing.crash import Tail, find_head_record, is_genesis
from audit._writing.events import normalize
from audit._writing.integrity import checked_frontier
from audit._writing.signing import HeadSigner, PublicKeys, keys_of, signed_head
from audit.tlog._anchor import AnchorDir, Anchored
from audit.tlog._merkle import Frontier, leaf_hash
from audit.tlog._note import Checkpoint, origin_for
from audit.tlog._tree import HeadView, TreeState, write_tree_state

__all__ = ["MAX_LINE_BYTES", "AuditLog"]

MAX_LINE_BYTES = 256 * 1024
"""A record line (LF included) may not be longer than this."""


_Stamp = tuple[int, int, int, int, int]


def _stamp_of(info: os.stat_result) -> _Stamp:
    """What tells this process the file is as it left it. The change time is in it because
    no one can set it back; a same-size edit within one clock tick of our own write (the
    file system's timestamp granularity) is the only change it can miss."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class AuditLog:
    """Appends records to one hash-chained JSONL log and keeps its signed head current.

    Use :meth:`open`. Safe for many processes (``flock``) and threads at once.
    """

    path: Path
    head_path: Path

    def __init__(
        self,
        path: Path,
        fd: int,
        signer: HeadSigner,
        public_keys: PublicKeys,
        *,
        previews: bool,
        anchors: AnchorDir | None = None,
    ) -> None:
        self.path = path
        self.head_path = head_path_for(path)
        self._fd: int | None = fd
        self._signer = signer
        self._previews = previews
        self._lock = threading.Lock()
        self._tail: Tail | None = None
        self._head_raw: bytes | None = None
        self._stamp: _Stamp | None = None
        self._anchors = anchors
        self._origin: str | None = None
        self._key_source = public_keys
        self._keys: Mapping[str, Ed25519PublicKey] = {}
        self._load_keys()

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        signer: HeadSigner,
        public_keys: PublicKeys,
        *,
        previews: bool = True,
        anchors: AnchorDir | None = None,
    ) -> AuditLog:
        """Open (creating it, its parents 0700 and the file 0600) the log at ``path``.

        ``public_keys`` are the keys a head may be signed by (see :data:`PublicKeys`): the
        head is verified against them before anything is appended, and a log that does
        not check out raises :class:`audit.LogIntegrityError`. A torn final line, or the
        one unsigned record a crash can leave, is quarantined here. ``previews=False``
        drops every ``preview`` field before it is written; otherwise previews are
        passed through :func:`audit.log.redact_preview`. An ``operatorReason`` is always
        redacted the same way (at most :data:`audit.wire.MAX_OPERATOR_REASON_CHARS` characters).

        Every line up to the head's record is checked against the signed head here, and
        again before an append whenever the file changed under this process. ``anchors``:
        where checkpoints are kept outside the home; the check then reads only from the
        latest anchored checkpoint that fits this file on.
        """
        log_path = Path(path)
        try:
            files.make_private_dirs(log_path.parent)
            fd = os.open(log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise LogWriteError(log_path, f"cannot open: {exc.strerror}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise LogWriteError(log_path, "not a regular file")
        try:
            log = cls(log_path, fd, signer, public_keys, previews=previews, anchors=anchors)
        except BaseException:
            os.close(fd)
            raise
        try:
            with log._lock, log._locked(fd):
                log._sync(fd)
        except BaseException:
            log.close()
            raise
        return log

    # -- public -------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._fd is None

    def use_signer(self, signer: HeadSigner) -> None:
        """Sign future heads with ``signer`` (after a key rotation)."""
        with self._lock:
            self._signer = signer

    def trust(self, public_keys: PublicKeys) -> None:
        """Verify future heads against ``public_keys`` (after a key rotation).

        Raises :class:`audit.UsageError` for what is not a keyring (or a function returning
        one), and then keeps the keys and the key source it had.
        """
        with self._lock:
            self._keys = keys_of(public_keys)
            self._key_source = public_keys

    def check(self) -> None:
        """Make sure the log is still intact up to its signed head, as before an append.

        Cheap while the file is as this process last left it; otherwise every line up to
        the head is read again. Raises :class:`audit.LogIntegrityError` like :meth:`append`.
        """
        with self._lock:
            fd = self._require_open()
            with self._locked(fd):
                self._sync(fd)

    @overload
    def append(self, event: EventData, data: None = None) -> AuditRecord: ...
    @overload
    def append(self, event: str, data: Mapping[str, Any]) -> AuditRecord: ...
    def append(self, event: str | EventData, data: Mapping[str, Any] | None = None) -> AuditRecord:
        """Validate, append and anchor one record; return it once line and head are durable.

        ``event`` is one typed event (an event's data model of :mod:`audit.wire`, which names
        its event; the guard appends only these) or an event name with its ``data`` as a
        camelCase mapping; the same facts write the same bytes either way
        (:func:`audit.wire.event_of`). Raises :class:`audit.EventError` (nothing written) for
        an unknown, reserved or invalid event, :class:`audit.LogWriteError` for I/O failures
        and :class:`audit.LogIntegrityError` when the log disagrees with its head.
        """
        if not isinstance(event, str):
            if data is not None:
                raise UsageError("data", "a typed event carries its own data", data)
            event, data = event_of(event)
        elif data is None:
            raise UsageError("data", "an event name goes with its data", data)
        if type(event) is not str or event not in KNOWN_EVENTS:
            raise UnknownEventError(event)
        if event in RESERVED_EVENTS:
            raise ReservedEventError(event)
        return self._append_reserved(event, data)

    def _append_reserved(self, event: str, data: Mapping[str, Any]) -> AuditRecord:
        """:meth:`append` without the reserved-event check (for :func:`audit.log.recover_log`)."""
        payload = normalize(event, data, previews=self._previews)
        with self._lock:
            fd = self._require_open()
            with self._locked(fd):
                tail = self._sync(fd)
                record, _ = self._write(fd, tail, event, payload)
                return record

    def close(self) -> None:
        """Close the log; later appends raise :class:`audit.LogClosedError`."""
        with self._lock:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                os.close(fd)

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path)!r})"

    # -- locking and state ---------------------------------------------------------

    def _require_open(self) -> int:
        if self._fd is None:
            raise LogClosedError(self.path)
        return self._fd

    @contextlib.contextmanager
    def _locked(self, fd: int) -> Iterator[None]:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise LogWriteError(self.path, f"cannot lock: {exc.strerror}") from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _load_keys(self) -> None:
        self._keys = keys_of(self._key_source)

    def _sync(self, fd: int) -> Tail:
        """Under the lock: verify the head and make sure the file ends exactly at its record."""
        try:
            info = os.fstat(fd)
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            raise LogIntegrityError(self.path, "log-replaced", "the log file was removed") from None
        except OSError as exc:
            raise LogWriteError(self.path, f"cannot stat: {exc.strerror}") from None
        if (on_disk.st_dev, on_disk.st_ino) != (info.st_dev, info.st_ino):
            raise LogIntegrityError(
                self.path, "log-replaced", "the log file was replaced while open"
            )
        size = info.st_size
        stamp = _stamp_of(info)
        raw = self._read_head()
        tail = self._tail
        if tail is not None and stamp == self._stamp and raw == self._head_raw:
            return tail
        self._tail = None
        self._head_raw = None
        self._stamp = None
        if raw is None:
            tail = self._sync_headless(fd, size)
            self._tail = tail
            return tail
        head = self._verified_head(fd, raw)
        if size == 0:
            raise LogIntegrityError(
                self.path,
                "records-missing-at-end",
                f"the log is empty but its head names record {head.seq}",
            )
        _, end, last_hash, reason = find_head_record(self.path, fd, size, head)
        frontier = checked_frontier(fd, self.path, head, end, self._anchored())
        tail = Tail(end, head.seq + 1, last_hash, frontier)
        if reason is not None:
            tail = self._recover(fd, tail, size, reason)
        else:
            self._head_raw = raw
            self._stamp = stamp
        self._tail = tail
        return tail

    def _anchored(self) -> Anchored | None:
        """The latest anchored checkpoint of this log that verifies, if anchors are kept."""
        if self._anchors is None or self._origin is None:
            return None
        try:
            anchored, _ = self._anchors.latest(self._keys, self._origin)
        except UsageError:
            return None
        return anchored

    def _read_head(self) -> bytes | None:
        try:
            with self.head_path.open("rb") as handle:
                return handle.read(MAX_HEAD_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LogWriteError(self.head_path, f"cannot read: {exc.strerror}") from None

    def _verified_head(self, fd: int, raw: bytes) -> HeadView:
        """The head, if it parses and its signature checks out against the trusted keys."""
        origin = self._log_origin(fd)
        try:
            try:
                return HeadView.parse(raw, self._keys, origin)
            except LogLineError as fault:
                if fault.kind != "head-unknown-key" or not callable(self._key_source):
                    raise
                self._load_keys()  # rotated by another process since we last looked
                return HeadView.parse(raw, self._keys, origin)
        except LogLineError as fault:
            raise LogIntegrityError(self.path, fault.kind, fault.detail) from None

    def _log_origin(self, fd: int) -> str | None:
        """The checkpoint origin named by record 0, or ``None`` if it cannot be read."""
        if self._origin is None:
            first = pread_exact(fd, MAX_LINE_BYTES, 0)
            line, found, _ = first.partition(b"\n")
            if found:
                try:
                    chain = Chain()
                    chain.accept(check_body(line))
                except LogLineError:
                    return None
                if chain.log_id is not None:
                    self._origin = origin_for(chain.log_id)
        return self._origin

    def _sync_headless(self, fd: int, size: int) -> Tail:
        if size > 0:
            # Only a crash while the very first record was written leaves a log with no
            # head: a torn fragment, or one complete genesis record. Anything else lost
            # its head some other way.
            lines = list(itertools.islice(lines_backward(fd, size), 2))
            reason = "torn-line"
            if len(lines) != 1 or (lines[0][1].endswith(b"\n") and not is_genesis(lines[0][1])):
                raise LogIntegrityError(
                    self.path,
                    "head-missing",
                    "the log has records but its signed head is missing",
                )
            if lines[0][1].endswith(b"\n"):
                reason = "unsigned-tail"
        log_id = "log_" + secrets.token_urlsafe(18)
        self._origin = origin_for(log_id)
        start = Tail(0, 0, genesis_hash(log_id), Frontier())
        if size > 0:
            name = files.quarantine(self.path, fd, 0, size)
            _, tail = self._write(fd, start, "log.created", {"logId": log_id, "schema": LOG_SCHEMA})
            _, tail = self._write(
                fd,
                tail,
                "log.recovered",
                {"quarantinedTo": name, "bytes": size, "reason": reason},
            )
            return tail
        _, tail = self._write(fd, start, "log.created", {"logId": log_id, "schema": LOG_SCHEMA})
        return tail

    # -- recovery --------------------------------------------------------------

    def _recover(self, fd: int, tail: Tail, size: int, reason: str) -> Tail:
        name = files.quarantine(self.path, fd, tail.size, size)
        _, new_tail = self._write(
            fd,
            tail,
            "log.recovered",
            {"quarantinedTo": name, "bytes": size - tail.size, "reason": reason},
        )
        return new_tail

    # -- writing ------------------------------------------------------------------

    def _write(
        self, fd: int, tail: Tail, event: str, data: dict[str, Any]
    ) -> tuple[AuditRecord, Tail]:
        ts = format_iso(utc_now())
        body = {"seq": tail.next_seq, "ts": ts, "event": event, "data": data, "prev": tail.prev}
        record_hash = sha256_prefixed(canonical_json(body))
        record = {**body, "hash": record_hash}
        line = canonical_json(record) + b"\n"
        if len(line) > MAX_LINE_BYTES:
            raise RecordTooLargeError(event, len(line), MAX_LINE_BYTES)
        frontier = tail.frontier.copy()
        frontier.append(leaf_hash(line[:-1]))
        if self._origin is None:
            raise LogIntegrityError(self.path, "genesis-invalid", "record 0 names no log id")
        head = signed_head(self._signer, Checkpoint(self._origin, frontier.size, frontier.root()))
        self._tail = None
        self._head_raw = None
        try:
            files.write_all(fd, line)
            os.fsync(fd)
        except OSError as exc:
            # Never leave a partial line behind for the next record to be glued onto.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, tail.size)
                os.fsync(fd)
            raise LogWriteError(self.path, f"cannot write a record: {exc.strerror}") from None
        try:
            files.replace_file(self.head_path, head)
        except OSError as exc:
            # The line stays as an unsigned tail; the next open or append moves it aside.
            raise LogWriteError(
                self.head_path, f"cannot replace the head: {exc.strerror}"
            ) from None
        write_tree_state(self.path, TreeState(tail.size, tail.frontier))
        new_tail = Tail(tail.size + len(line), tail.next_seq + 1, record_hash, frontier)
        self._tail = new_tail
        self._head_raw = head
        with contextlib.suppress(OSError):  # unknown: the next append checks the whole log
            self._stamp = _stamp_of(os.fstat(fd))
        return AuditRecord.model_validate(record), new_tail
