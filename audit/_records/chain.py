"""Checking lines of the hash chain: shared by the appender, ``read_records`` and ``verify_log``.

Per line the work is one ``json.loads``, one canonicalization and one SHA-256:
the line must be byte-for-byte the canonical JSON of what it parses to (which
also rules out duplicate keys, odd escapes and whitespace), and its hash is
recomputed over the same bytes with the ``"hash"`` member cut out, which is
exactly the canonical JSON of the record without ``"hash"``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated, Any, Union

import msgspec
from pydantic import ValidationError

from audit._errors import (
    CanonicalizationError,
    LogLineError,
    LogNotAFileError,
    LogNotFoundError,
    LogWriteError,
)
from audit._records.canonical import canonical_json, sha256_prefixed
from audit._records.log_events import LogCreatedData
from audit._records.models import genesis_hash
from audit._records.wire import ISO_MILLIS_RE

__all__ = [
    "MAX_HEAD_BYTES",
    "Chain",
    "check_body",
    "check_body_exact",
    "check_parts",
    "head_path_for",
    "lines_backward",
    "open_snapshot",
    "pread_exact",
]

MAX_HEAD_BYTES = 64 * 1024
_CHUNK = 64 * 1024
_RECORD_KEYS = frozenset({"seq", "ts", "event", "data", "prev", "hash"})
# In canonical form the members are data, event, hash, prev, seq, ts: "hash" is never
# first, and ',"' cannot occur inside a JSON string (a quote there is escaped), so the
# last occurrence of this marker is the top-level hash member.
_HASH_MARK = b',"hash":"'
_sha256 = hashlib.sha256


def head_path_for(path: Path) -> Path:
    """``<log>.head`` next to the log."""
    return path.with_name(path.name + ".head")


_SafeInt = Annotated[int, msgspec.Meta(ge=-(2**53 - 1), le=2**53 - 1)]
_Scalar = Union[None, bool, _SafeInt, str]  # noqa: UP007 (msgspec reads the Union)
_Inner = Union[_Scalar, list[_Scalar], dict[str, _Scalar]]  # noqa: UP007
_Value = Union[_Scalar, list[_Inner], dict[str, _Inner]]  # noqa: UP007


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    """The record as the fast path decodes it: no floats, integers within 2**53 - 1, data
    nested at most three levels (deeper data takes the exact path)."""

    data: dict[str, _Value]
    event: Annotated[str, msgspec.Meta(min_length=1)]
    hash: str
    prev: str
    seq: Annotated[int, msgspec.Meta(ge=0)]
    ts: str


_DECODER = msgspec.json.Decoder(_Record)
_ENCODER = msgspec.json.Encoder(order="sorted")
# Outside the fast path's domain: a backslash-u escape may hide a lone surrogate; a 4-byte
# UTF-8 lead byte means a character above U+FFFF (keys sort by UTF-16 code units in RFC 8785,
# by code point in msgspec).
_ASTRAL = re.compile(rb"[\xf0-\xf4]")

Parts = tuple[int, str, dict[str, Any], str, str]
"""``(seq, event, data, prev, hash)`` of a line that checked out."""


def _fast(body: bytes) -> _Record | None:
    """The record if the fast path proves the line canonical and its hash right, else None.

    msgspec decodes into a typed record and re-encodes it with sorted keys; in the domain
    where that encoding *is* RFC 8785 (no floats, no integer beyond 2**53 - 1, no ``\\u``
    escape, no character above U+FFFF) equal bytes mean the line is canonical. ``None``
    sends the line to :func:`check_body_exact`, so both decide every line alike (a
    property test checks).
    """
    # (A one-byte search first: it is a memchr; the two-byte one is not.)
    if (b"\\" in body and b"\\u" in body) or (
        not body.isascii() and _ASTRAL.search(body) is not None
    ):
        return None
    try:
        rec = _DECODER.decode(body)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    h = rec.hash
    start = body.rfind(_HASH_MARK)
    end = start + len(_HASH_MARK) + len(h)
    if (
        _ENCODER.encode(rec) != body
        or ISO_MILLIS_RE.fullmatch(rec.ts) is None
        or start < 0
        or "sha256:" + _sha256(body[:start] + body[end + 1 :]).hexdigest() != h
    ):
        return None
    return rec


def check_parts(body: bytes) -> Parts:
    """Check one line (LF removed): shape, canonical form and own hash; return its parts."""
    rec = _fast(body)
    if rec is None:
        exact = check_body_exact(body)
        return exact["seq"], exact["event"], exact["data"], exact["prev"], exact["hash"]
    return rec.seq, rec.event, rec.data, rec.prev, rec.hash


def check_body(body: bytes) -> dict[str, Any]:
    """Check one line (LF removed): shape, canonical form and own hash; return the record."""
    rec = _fast(body)
    if rec is None:
        return check_body_exact(body)
    return {
        "data": rec.data,
        "event": rec.event,
        "hash": rec.hash,
        "prev": rec.prev,
        "seq": rec.seq,
        "ts": rec.ts,
    }


def check_body_exact(body: bytes) -> dict[str, Any]:
    """:func:`check_body` by the reference route: ``json``, our JCS, one SHA-256."""
    try:
        rec = json.loads(body)
    except ValueError:
        raise LogLineError("malformed-line", "not valid UTF-8 JSON") from None
    except RecursionError:  # hostile nesting: CPython's parser recurses per level
        raise LogLineError("malformed-line", "JSON nested too deeply") from None
    if type(rec) is not dict or rec.keys() != _RECORD_KEYS:
        raise LogLineError(
            "malformed-line", "not an object with exactly seq, ts, event, data, prev, hash"
        )
    seq = rec["seq"]
    ts = rec["ts"]
    event = rec["event"]
    h = rec["hash"]
    if (
        type(seq) is not int
        or seq < 0
        or type(ts) is not str
        or ISO_MILLIS_RE.fullmatch(ts) is None
        or type(event) is not str
        or not event
        or type(rec["data"]) is not dict
        or type(rec["prev"]) is not str
        or type(h) is not str
    ):
        raise LogLineError("malformed-line", "a field has the wrong type or form")
    try:
        canon = canonical_json(rec)
    except CanonicalizationError as exc:
        raise LogLineError("malformed-line", f"no canonical form ({exc.code})") from None
    if canon != body:
        raise LogLineError("malformed-line", "not in canonical JSON form")
    start = body.rfind(_HASH_MARK)
    value = h.encode("utf-8")
    end = start + len(_HASH_MARK) + len(value)
    if start < 0 or body[start + len(_HASH_MARK) : end] != value or body[end : end + 1] != b'"':
        raise LogLineError("hash-mismatch", "the hash field is not a sha256 value")
    if sha256_prefixed(body[:start] + body[end + 1 :]) != h:
        raise LogLineError("hash-mismatch", "the stored hash does not match the record")
    return rec


class Chain:
    """Follows ``seq`` and ``prev`` from the genesis record on."""

    __slots__ = ("log_id", "next_seq", "prev")

    def __init__(self, next_seq: int = 0) -> None:
        """A chain from the genesis record, or resumed at record ``next_seq`` whose
        ``prev`` is not checked (a signed checkpoint vouches for the records before it)."""
        self.next_seq = next_seq
        self.prev: str | None = None
        self.log_id: str | None = None

    def accept(self, rec: dict[str, Any]) -> None:
        """Check ``rec`` continues the chain and advance; raise :class:`LogLineError` if not."""
        self.accept_parts(rec["seq"], rec["event"], rec["data"], rec["prev"], rec["hash"])

    def accept_parts(
        self, seq: int, event: str, data: dict[str, Any], prev_hash: str, record_hash: str
    ) -> None:
        """:meth:`accept` for the parts :func:`check_parts` returns."""
        if seq != self.next_seq:
            raise LogLineError("seq-mismatch", f"expected seq {self.next_seq}, found {seq}")
        prev = self.prev
        if prev is None and seq > 0:
            pass  # resumed: the checkpoint's root covers this record's bytes
        elif prev is None:
            if event != "log.created":
                raise LogLineError("genesis-invalid", "record 0 is not a log.created event")
            try:
                created = LogCreatedData.model_validate(data)
            except ValidationError:
                raise LogLineError(
                    "genesis-invalid", "record 0 has invalid log.created data"
                ) from None
            self.log_id = created.log_id
            prev = genesis_hash(created.log_id)
            if prev_hash != prev:
                raise LogLineError("prev-mismatch", "record 0 does not chain from its log id")
        elif prev_hash != prev:
            raise LogLineError("prev-mismatch", f"prev is not the hash of record {seq - 1}")
        self.prev = record_hash
        self.next_seq = seq + 1


def pread_exact(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset`` (fewer only at end of file)."""
    parts: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


def lines_backward(fd: int, size: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, line)`` from the end of the first ``size`` bytes backwards.

    Each line includes its LF; only the first one yielded may lack it (a torn tail).
    """
    pos = size
    pending = b""
    while True:
        end = len(pending)
        while end > 0:
            cut = pending.rfind(b"\n", 0, end - 1)
            if cut < 0:
                break
            yield pos + cut + 1, pending[cut + 1 : end]
            end = cut + 1
        pending = pending[:end]
        if pos == 0:
            if pending:
                yield 0, pending
            return
        step = min(_CHUNK, pos)
        pos -= step
        pending = pread_exact(fd, step, pos) + pending


def open_snapshot(path: Path, *, with_head: bool) -> tuple[IO[bytes], int, bytes | None]:
    """Open the log for reading and take a consistent ``(file, size, head bytes)`` snapshot.

    Appenders hold an exclusive ``flock`` from writing a line until its head is in
    place, so under a shared lock the size and the head agree. Where ``flock`` is
    unavailable (some network file systems) the snapshot is taken without it.
    """
    try:
        # O_NONBLOCK: a FIFO named as the log must not hang the open (no effect on files).
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise LogNotFoundError(path) from None
    except OSError as exc:
        raise LogWriteError(path, f"cannot open: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LogNotAFileError(path)
        locked = True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            locked = False
        try:
            head = _read_head_bytes(head_path_for(path)) if with_head else None
            size = os.fstat(fd).st_size
        finally:
            if locked:
                fcntl.flock(fd, fcntl.LOCK_UN)
        stream = os.fdopen(fd, "rb", buffering=1 << 20)
    except BaseException:
        os.close(fd)
        raise
    return stream, size, head


def _read_head_bytes(head_path: Path) -> bytes | None:
    try:
        with head_path.open("rb") as handle:
            return handle.read(MAX_HEAD_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LogWriteError(head_path, f"cannot read: {exc.strerror}") from None
