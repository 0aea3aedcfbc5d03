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
signs over it. Only the operator's ``pi-guard audit recover`` (:func:`audit.recover_log`)
moves such a log aside, and it records what it did in the new log.

Before its first append, and whenever the file is not as this process last left it
(another inode, size or time), a process also checks every line up to the head's record
against the signed head (:mod:`audit._integrity`): an edit in the middle of the log is
refused like a cut at its end.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import os
import re
import secrets
import stat
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol, runtime_checkable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import ValidationError

from audit._anchor import AnchorDir, Anchored
from audit._canonical import canonical_json, sha256_prefixed
from audit._chain import (
    MAX_HEAD_BYTES,
    Chain,
    check_body,
    head_path_for,
    lines_backward,
    open_snapshot,
    pread_exact,
)
from audit._errors import (
    EventDataError,
    LogClosedError,
    LogFormatError,
    LogIntegrityError,
    LogLineError,
    LogWriteError,
    NoteError,
    RecordTooLargeError,
    ReservedEventError,
    SignerError,
    UnknownEventError,
    UsageError,
)
from audit._integrity import checked_frontier
from audit._merkle import Frontier, leaf_hash
from audit._models import (
    EVENT_MODELS,
    KNOWN_EVENTS,
    LOG_SCHEMA,
    MAX_OPERATOR_REASON_CHARS,
    RESERVED_EVENTS,
    AuditRecord,
    genesis_hash,
)
from audit._note import Checkpoint, origin_for, sign_checkpoint
from audit._redact import redact_preview
from audit._tree import HeadView, TreeState, write_tree_state
from audit._wire import format_iso, utc_now

__all__ = ["MAX_LINE_BYTES", "AuditLog", "HeadSigner", "PublicKeys", "read_records"]

MAX_LINE_BYTES = 256 * 1024
"""A record line (LF included) may not be longer than this."""

_KEY_ID = re.compile(r"ed25519:[0-9a-f]{64}")
_COPY_CHUNK = 1 << 20

_Stamp = tuple[int, int, int, int, int]


def _stamp_of(info: os.stat_result) -> _Stamp:
    """What tells this process the file is as it left it. The change time is in it because
    no one can set it back; a same-size edit within one clock tick of our own write (the
    file system's timestamp granularity) is the only change it can miss."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


PublicKeys = Mapping[str, Ed25519PublicKey] | Callable[[], Mapping[str, Ed25519PublicKey]]
"""The keys a head may be signed by: a mapping, or a function returning the current one
(called again when a head names a key the last answer did not have, e.g. after a rotation
by another process)."""


@runtime_checkable
class HeadSigner(Protocol):
    """Signs the log head; implemented by the guard with its Ed25519 key."""

    @property
    def key_id(self) -> str:
        """``"ed25519:" + hex(SHA-256(raw public key))``."""
        ...

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The public half: the checkpoint note's key id is derived from it."""
        ...

    def sign(self, message: bytes) -> bytes:
        """The raw 64-byte Ed25519 signature of ``message``."""
        ...


@dataclass(frozen=True, slots=True)
class _Tail:
    """Where the next record goes: the log's size, the chain position after it, and the
    Merkle frontier of every record before it (``frontier.size == next_seq``)."""

    size: int
    next_seq: int
    prev: str
    frontier: Frontier


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_private_dirs(directory: Path) -> None:
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for item in reversed(missing):
        with contextlib.suppress(FileExistsError):
            item.mkdir(mode=0o700)


def _keys_of(source: PublicKeys) -> dict[str, Ed25519PublicKey]:
    """The keyring ``source`` is or returns; :class:`UsageError` when it is not one."""
    keys = source() if callable(source) else source
    if not isinstance(keys, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Ed25519PublicKey) for k, v in keys.items()
    ):
        raise UsageError(
            "public_keys", "must map key ids to Ed25519 public keys", type(keys).__name__
        )
    return dict(keys)


def _errors_of(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "(data)"
        out.append(f"{where}: {err['msg']}")
    return out


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
        self._tail: _Tail | None = None
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
        passed through :func:`audit.redact_preview`. An ``operatorReason`` is always
        redacted the same way (at most :data:`audit.MAX_OPERATOR_REASON_CHARS` characters).

        Every line up to the head's record is checked against the signed head here, and
        again before an append whenever the file changed under this process. ``anchors``:
        where checkpoints are kept outside the home; the check then reads only from the
        latest anchored checkpoint that fits this file on.
        """
        log_path = Path(path)
        try:
            _make_private_dirs(log_path.parent)
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
            self._keys = _keys_of(public_keys)
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

    def append(self, event: str, data: Mapping[str, Any]) -> AuditRecord:
        """Validate, append and anchor one record; return it once line and head are durable.

        Raises :class:`audit.EventError` (nothing written) for an unknown, reserved or
        invalid event, :class:`audit.LogWriteError` for I/O failures and
        :class:`audit.LogIntegrityError` when the log disagrees with its head.
        """
        if type(event) is not str or event not in KNOWN_EVENTS:
            raise UnknownEventError(event)
        if event in RESERVED_EVENTS:
            raise ReservedEventError(event)
        return self._append_reserved(event, data)

    def _append_reserved(self, event: str, data: Mapping[str, Any]) -> AuditRecord:
        """:meth:`append` without the reserved-event check (for :func:`audit.recover_log`)."""
        payload = self._normalize(event, data)
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

    # -- validation ----------------------------------------------------------

    def _normalize(self, event: str, data: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise EventDataError(event, [f"(data): must be a mapping, not {type(data).__name__}"])
        # A JSON round trip turns tuples into lists and refuses what has no JSON form.
        plain = json.loads(canonical_json(dict(data)))
        preview = plain.get("preview")
        if "preview" in plain and (not self._previews or preview == ""):
            del plain["preview"]
        elif isinstance(preview, str):
            plain["preview"] = redact_preview(preview)
        # The operator's own words: kept even without previews, but redacted and bounded alike.
        reason = plain.get("operatorReason")
        if isinstance(reason, str):
            plain["operatorReason"] = redact_preview(reason, limit=MAX_OPERATOR_REASON_CHARS)
            if not plain["operatorReason"]:
                del plain["operatorReason"]
        try:
            model = EVENT_MODELS[event].model_validate(plain)
        except ValidationError as exc:
            raise EventDataError(event, _errors_of(exc)) from None
        result: dict[str, Any] = model.model_dump(mode="json", exclude_none=True)
        return result

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
        self._keys = _keys_of(self._key_source)

    def _sync(self, fd: int) -> _Tail:
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
        _, end, last_hash, reason = self._find_head_record(fd, size, head)
        frontier = checked_frontier(fd, self.path, head, end, self._anchored())
        tail = _Tail(end, head.seq + 1, last_hash, frontier)
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

    def _sync_headless(self, fd: int, size: int) -> _Tail:
        if size > 0:
            # Only a crash while the very first record was written leaves a log with no
            # head: a torn fragment, or one complete genesis record. Anything else lost
            # its head some other way.
            lines = list(itertools.islice(lines_backward(fd, size), 2))
            reason = "torn-line"
            if len(lines) != 1 or (lines[0][1].endswith(b"\n") and not _is_genesis(lines[0][1])):
                raise LogIntegrityError(
                    self.path,
                    "head-missing",
                    "the log has records but its signed head is missing",
                )
            if lines[0][1].endswith(b"\n"):
                reason = "unsigned-tail"
        log_id = "log_" + secrets.token_urlsafe(18)
        self._origin = origin_for(log_id)
        start = _Tail(0, 0, genesis_hash(log_id), Frontier())
        if size > 0:
            name = self._quarantine(fd, 0, size)
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

    def _find_head_record(
        self, fd: int, size: int, head: HeadView
    ) -> tuple[int, int, str, str | None]:
        """Where the record the head names starts and ends, its hash, and what a crash
        left after it.

        The head's record must be the last complete line, or the one before a single
        complete record that chains from it; the last value is ``None`` (nothing
        after it), ``"torn-line"`` or ``"unsigned-tail"``. Anything else raises.
        """
        backward = lines_backward(fd, size)
        torn = False
        after: list[dict[str, Any] | LogLineError] = []
        for offset, line in backward:
            if not line.endswith(b"\n"):
                torn = True  # only the last piece can lack its line feed
                continue
            try:
                rec: dict[str, Any] | LogLineError = check_body(line[:-1])
            except LogLineError as fault:
                rec = fault
            if (
                isinstance(rec, dict)
                and rec["seq"] == head.seq
                and (head.hash is None or rec["hash"] == head.hash)
            ):
                self._check_predecessor(backward, rec)
                reason = self._crash_tail(head.seq, rec["hash"], after, torn)
                return offset, offset + len(line), rec["hash"], reason
            after.append(rec)
            if len(after) > 1:
                break
        raise self._no_head_record(head, after)

    def _crash_tail(
        self, seq: int, last_hash: str, after: list[dict[str, Any] | LogLineError], torn: bool
    ) -> str | None:
        """Judge what follows the head's record: only one crashed append's leftovers pass."""
        if not after:
            return "torn-line" if torn else None
        (rec,) = after
        if isinstance(rec, LogLineError):
            raise LogIntegrityError(
                self.path, rec.kind, f"the line after the head's record is damaged: {rec.detail}"
            )
        if torn:
            raise LogIntegrityError(
                self.path,
                "records-after-head",
                "a record and a torn line follow the head's record: no single crash leaves both",
            )
        if rec["seq"] != seq + 1:
            raise LogIntegrityError(
                self.path,
                "seq-mismatch",
                f"the record after the head's record has seq {rec['seq']}, not {seq + 1}",
            )
        if rec["prev"] != last_hash:
            raise LogIntegrityError(
                self.path,
                "prev-mismatch",
                "the record after the head's record does not chain from it",
            )
        return "unsigned-tail"

    def _no_head_record(
        self, head: HeadView, after: list[dict[str, Any] | LogLineError]
    ) -> LogIntegrityError:
        records = [rec for rec in after if isinstance(rec, dict)]
        if len(records) < len(after) or any(rec["seq"] == head.seq for rec in records):
            return LogIntegrityError(
                self.path,
                "head-mismatch",
                f"the record the head names (seq {head.seq}) is missing or differs",
            )
        if len(records) == 2 and all(rec["seq"] > head.seq for rec in records):
            return LogIntegrityError(
                self.path,
                "records-after-head",
                f"more than one record follows the head's record (seq {head.seq}): "
                "an older head was put back, or records were added without the key",
            )
        if records and records[0]["seq"] < head.seq:
            return LogIntegrityError(
                self.path,
                "records-missing-at-end",
                f"the head names record {head.seq} but the log ends at record {records[0]['seq']}",
            )
        return LogIntegrityError(
            self.path,
            "head-mismatch",
            f"no record in the log matches the head (seq {head.seq})",
        )

    def _check_predecessor(self, backward: Iterator[tuple[int, bytes]], rec: Any) -> None:
        """The line before the head's record must be the record it chains from.

        Without this, a copy of the head's record appended after it would be taken for
        the head's record, and the appender would sign over a log with two records of
        one ``seq``.
        """
        if rec["seq"] == 0:
            return
        previous = next(backward, None)
        try:
            before = None if previous is None else check_body(previous[1][:-1])
        except LogLineError:
            before = None
        if before is None or before["seq"] != rec["seq"] - 1 or before["hash"] != rec["prev"]:
            raise LogIntegrityError(
                self.path,
                "head-mismatch",
                f"the record the head names (seq {rec['seq']}) does not chain from the one before",
            )

    # -- recovery --------------------------------------------------------------

    def _recover(self, fd: int, tail: _Tail, size: int, reason: str) -> _Tail:
        name = self._quarantine(fd, tail.size, size)
        _, new_tail = self._write(
            fd,
            tail,
            "log.recovered",
            {"quarantinedTo": name, "bytes": size - tail.size, "reason": reason},
        )
        return new_tail

    def _quarantine(self, fd: int, start: int, size: int) -> str:
        """Copy bytes ``[start, size)`` to ``<log>.torn-<ts>``; truncate the log to ``start``."""
        stamp = format_iso(utc_now()).replace("-", "").replace(":", "")
        base = f"{self.path.name}.torn-{stamp}"
        try:
            for attempt in range(1, 1000):
                name = base if attempt == 1 else f"{base}-{attempt}"
                target = self.path.with_name(name)
                try:
                    out = os.open(
                        target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
                    )
                except FileExistsError:
                    continue
                break
            else:
                raise LogWriteError(self.path, "cannot find a free quarantine file name")
            try:
                offset = start
                while offset < size:
                    chunk = pread_exact(fd, min(_COPY_CHUNK, size - offset), offset)
                    if not chunk:
                        break
                    _write_all(out, chunk)
                    offset += len(chunk)
                os.fsync(out)
            finally:
                os.close(out)
            _fsync_dir(self.path.parent)
            os.ftruncate(fd, start)
            os.fsync(fd)
        except OSError as exc:
            raise LogWriteError(
                self.path, f"cannot quarantine a torn tail: {exc.strerror}"
            ) from None
        return name

    # -- writing ------------------------------------------------------------------

    def _signed_head(self, checkpoint: Checkpoint) -> bytes:
        """The signed checkpoint note for the head after this append."""
        key_id = self._signer.key_id
        if not isinstance(key_id, str) or _KEY_ID.fullmatch(key_id) is None:
            raise SignerError("key id", key_id)
        public = getattr(self._signer, "public_key", None)
        if not isinstance(public, Ed25519PublicKey):
            raise SignerError("public key", public)
        raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        if key_id != "ed25519:" + hashlib.sha256(raw).hexdigest():
            raise SignerError("key id (not the signer's public key)", key_id)
        try:
            return sign_checkpoint(checkpoint, public, self._signer.sign)
        except NoteError:
            raise SignerError("signature", "does not verify with the signer's public key") from None

    def _write(
        self, fd: int, tail: _Tail, event: str, data: dict[str, Any]
    ) -> tuple[AuditRecord, _Tail]:
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
        head = self._signed_head(Checkpoint(self._origin, frontier.size, frontier.root()))
        self._tail = None
        self._head_raw = None
        try:
            _write_all(fd, line)
            os.fsync(fd)
        except OSError as exc:
            # Never leave a partial line behind for the next record to be glued onto.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, tail.size)
                os.fsync(fd)
            raise LogWriteError(self.path, f"cannot write a record: {exc.strerror}") from None
        try:
            self._replace_head(head)
        except OSError as exc:
            # The line stays as an unsigned tail; the next open or append moves it aside.
            raise LogWriteError(
                self.head_path, f"cannot replace the head: {exc.strerror}"
            ) from None
        write_tree_state(self.path, TreeState(tail.size, tail.frontier))
        new_tail = _Tail(tail.size + len(line), tail.next_seq + 1, record_hash, frontier)
        self._tail = new_tail
        self._head_raw = head
        with contextlib.suppress(OSError):  # unknown: the next append checks the whole log
            self._stamp = _stamp_of(os.fstat(fd))
        return AuditRecord.model_validate(record), new_tail

    def _replace_head(self, content: bytes) -> None:
        tmp = self.head_path.with_name(
            f".{self.head_path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        )
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            try:
                _write_all(fd, content)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.head_path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        _fsync_dir(self.head_path.parent)


def _is_genesis(line: bytes) -> bool:
    try:
        Chain().accept(check_body(line[:-1]))
    except LogLineError:
        return False
    return True


def read_records(path: str | os.PathLike[str]) -> Iterator[AuditRecord]:
    """Yield every record of the log at ``path``, checking hashes, ``seq`` and ``prev``.

    The signed head is not checked here (use :func:`audit.verify_log`). Raises
    :class:`audit.LogFormatError` at the first line that breaks the chain and
    :class:`audit.LogNotFoundError` if there is no log.
    """
    log_path = Path(path)
    stream, size, _ = open_snapshot(log_path, with_head=False)
    with stream:
        yield from _records(log_path, stream, size)


def _records(path: Path, stream: IO[bytes], size: int) -> Iterator[AuditRecord]:
    chain = Chain()
    done = 0
    if size == 0:
        return
    for lineno, raw in enumerate(stream, start=1):
        line = raw
        done += len(line)
        if done > size:
            line = line[: len(line) - (done - size)]
            done = size
        try:
            if not line.endswith(b"\n"):
                raise LogLineError("torn-line", "the last line has no line feed")
            rec = check_body(line[:-1])
            chain.accept(rec)
        except LogLineError as fault:
            raise LogFormatError(path, lineno, fault.kind, fault.detail) from None
        try:
            yield AuditRecord.model_validate(rec)
        except ValidationError:
            raise LogFormatError(
                path, lineno, "malformed-line", "a field has the wrong type or form"
            ) from None
        if done >= size:
            return
