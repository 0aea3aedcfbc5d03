"""JSON lines over a byte stream: records split on LF only, with bounded memory.

The same rules as pi's own RPC mode and session files: a trailing ``\\r`` is stripped,
U+2028/U+2029 stay inside strings, a last line without LF still counts. A line longer than
the limit is discarded while it streams in and comes out as an ``oversize`` frame. The
sidecar's JSON-RPC (:mod:`guard._sidecar.framing`) and the readers of pi's session files
share it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

__all__ = ["MAX_LINE_BYTES", "READ_CHUNK", "Frame", "LineSplitter", "iter_frames"]

MAX_LINE_BYTES = 1 << 20
READ_CHUNK = 64 * 1024
_HEAD_BYTES = 256


@dataclass(frozen=True, slots=True)
class Frame:
    """One record: ``data`` is the line without LF and trailing CR.

    ``oversize`` > 0 means the line was longer than the limit and was discarded
    (``data`` is then empty, ``oversize`` is its length in bytes and ``head`` keeps its
    first bytes, enough to name the request id in the error).
    """

    data: bytes
    oversize: int = 0
    head: bytes = field(default=b"", compare=False)


@dataclass(slots=True)
class LineSplitter:
    """Incremental LF splitter with a per-line byte limit and bounded memory."""

    max_line: int = MAX_LINE_BYTES
    _buffer: bytearray = field(default_factory=bytearray)
    _discarding: int = 0
    _head: bytes = b""

    def feed(self, chunk: bytes) -> list[Frame]:
        """Add bytes; return every record completed by them."""
        frames: list[Frame] = []
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                break
            frames.append(self._close())
            start = end + 1
        return frames

    def finish(self) -> list[Frame]:
        """End of input: a last line without LF is still a record (an empty rest is not)."""
        if self._discarding or self._buffer:
            return [self._close()]
        return []

    def _take(self, piece: bytes) -> None:
        if self._discarding:
            self._discarding += len(piece)
            return
        self._buffer += piece
        # One extra byte for a CR that CRLF input puts before the LF.
        if len(self._buffer) > self.max_line + 1:
            self._discarding = len(self._buffer)
            self._head = bytes(self._buffer[:_HEAD_BYTES])
            self._buffer = bytearray()

    def _close(self) -> Frame:
        if self._discarding:
            size, self._discarding = self._discarding, 0
            return Frame(b"", oversize=size, head=self._head)
        data = bytes(self._buffer)
        self._buffer = bytearray()
        if data.endswith(b"\r"):
            data = data[:-1]
        if len(data) > self.max_line:
            return Frame(b"", oversize=len(data), head=data[:_HEAD_BYTES])
        return Frame(data)


def iter_frames(
    stream: BinaryIO, *, max_line: int = MAX_LINE_BYTES, chunk: int = READ_CHUNK
) -> Iterator[Frame]:
    """Records from a binary stream, reading at most ``chunk`` bytes at a time.

    ``readline(limit)`` returns as soon as a LF arrives, so an interactive pipe is served
    line by line without waiting for a full chunk.
    """
    splitter = LineSplitter(max_line)
    while True:
        piece = stream.readline(chunk)
        if not piece:
            yield from splitter.finish()
            return
        yield from splitter.feed(piece)
