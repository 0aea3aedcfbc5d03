"""The low-level readers of ``audit/_records/chain.py``: exact reads, the backward line scan, the head.

``lines_backward`` finds the last record of a log without reading it all; it must yield every
line exactly once, with its offset, across any chunk boundary. ``pread_exact`` must survive the
short reads POSIX allows (a signal, a network file system), which a local file never gives, so
those tests cut ``os.pread`` short on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit._errors import LogWriteError
from audit._records import chain as _chain
from audit._records.chain import MAX_HEAD_BYTES, lines_backward, open_snapshot, pread_exact


def lines_of(data: bytes) -> list[tuple[int, bytes]]:
    """A forward split at LF only: every line with its LF (the last may lack it), with offsets."""
    found: list[tuple[int, bytes]] = []
    offset = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        end = len(data) if end < 0 else end + 1
        found.append((offset, data[offset:end]))
        offset = end
    return found


def backward(tmp_path: Path, data: bytes, size: int | None = None) -> list[tuple[int, bytes]]:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return list(lines_backward(fd, len(data) if size is None else size))
    finally:
        os.close(fd)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_chain, "_CHUNK", 4)
    return 4


def test_lines_come_back_last_first_with_their_offsets(tmp_path: Path) -> None:
    data = b'{"a":1}\n{"b":22}\n{"c":333}\n'
    assert backward(tmp_path, data) == [(17, b'{"c":333}\n'), (8, b'{"b":22}\n'), (0, b'{"a":1}\n')]


def test_a_torn_tail_comes_first_without_its_lf(tmp_path: Path) -> None:
    assert backward(tmp_path, b"one\ntwo\nthr") == [(8, b"thr"), (4, b"two\n"), (0, b"one\n")]


def test_only_the_first_size_bytes_are_read(tmp_path: Path) -> None:
    assert backward(tmp_path, b"one\ntwo\nthree\n", size=8) == [(4, b"two\n"), (0, b"one\n")]
    assert backward(tmp_path, b"one\ntwo\n", size=0) == []


def test_empty_lines_are_lines(tmp_path: Path) -> None:
    assert backward(tmp_path, b"\n\nx\n") == [(2, b"x\n"), (1, b"\n"), (0, b"\n")]
    assert backward(tmp_path, b"\n") == [(0, b"\n")]


@pytest.mark.usefixtures("small_chunks")
def test_lines_longer_than_a_chunk_and_on_its_boundaries_are_whole(tmp_path: Path) -> None:
    for data in (
        b"abcdefghij\nk\n",  # a line over two chunks
        b"abc\ndefg\n",  # LF exactly at a chunk boundary
        b"abcd\nefgh\nij",  # a torn tail shorter than a chunk
        b"a\nb\nc\nd\ne\n",
        b"abcdefgh",  # one torn line, two whole chunks
    ):
        assert backward(tmp_path, data) == lines_of(data)[::-1], data


@settings(max_examples=200)
@given(
    data=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12).map(
        lambda parts: b"\n".join(parts)
    ),
    chunk=st.integers(min_value=1, max_value=9),
)
def test_backward_is_forward_reversed_for_any_chunk_size(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, chunk: int
) -> None:
    tmp = tmp_path_factory.mktemp("back")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_chain, "_CHUNK", chunk)
        assert backward(tmp, data) == lines_of(data)[::-1]


def test_pread_exact_reads_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert pread_exact(fd, 4, 3) == b"3456"
        assert pread_exact(fd, 100, 7) == b"789"  # fewer only at the end of the file
        assert pread_exact(fd, 5, 10) == b""
        assert pread_exact(fd, 0, 0) == b""
    finally:
        os.close(fd)


@pytest.mark.parametrize("most", [1, 2, 3])
def test_pread_exact_keeps_reading_after_short_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most: int
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    real_pread = os.pread
    calls: list[tuple[int, int]] = []

    def short_pread(fd: int, size: int, offset: int) -> bytes:
        calls.append((size, offset))
        return real_pread(fd, min(size, most), offset)

    monkeypatch.setattr(os, "pread", short_pread)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert pread_exact(fd, 7, 2) == b"2345678"
        # each call asks for what is still missing, where it is missing
        assert calls[0] == (7, 2) and calls[1] == (7 - most, 2 + most)
        calls.clear()
        assert pread_exact(fd, 9, 5) == b"56789"
        assert calls[-1] == (9 - 5, 10)  # stops at the end of the file, not before
    finally:
        os.close(fd)


def test_the_head_is_read_up_to_one_byte_past_its_cap(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b"")
    head = _chain.head_path_for(log)
    for size in (0, 10, MAX_HEAD_BYTES, MAX_HEAD_BYTES + 1, MAX_HEAD_BYTES + 50):
        head.write_bytes(b"h" * size)
        stream, _, got = open_snapshot(log, with_head=True)
        stream.close()
        assert got == b"h" * min(size, MAX_HEAD_BYTES + 1)


def test_a_missing_head_is_none_and_an_unreadable_one_names_itself(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b"")
    stream, size, got = open_snapshot(log, with_head=True)
    stream.close()
    assert (size, got) == (0, None)
    head = _chain.head_path_for(log)
    head.mkdir()  # a directory where the head should be: reading it fails
    with pytest.raises(LogWriteError) as raised:
        open_snapshot(log, with_head=True)
    assert raised.value.path == str(head)
    assert raised.value.problem == "cannot read: Is a directory"
