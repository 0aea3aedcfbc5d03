"""The sidecar's line framing: LF only, CR stripped, U+2028/2029 kept, bounded memory."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._sidecar.framing import (
    MAX_LINE_BYTES,
    Frame,
    LineSplitter,
    RpcCode,
    decode_request,
    encode_message,
    iter_frames,
)


def split_all(data: bytes, max_line: int = MAX_LINE_BYTES) -> list[Frame]:
    splitter = LineSplitter(max_line)
    return [*splitter.feed(data), *splitter.finish()]


def test_lf_splits_and_crlf_loses_its_cr() -> None:
    frames = split_all(b'{"a":1}\n{"b":2}\r\n{"c":3}\n')
    assert [f.data for f in frames] == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_unicode_line_separators_stay_inside_the_record() -> None:
    text = json.dumps({"s": "one\u2028two\u2029three"}, ensure_ascii=False)
    frames = split_all(text.encode() + b"\n")
    assert len(frames) == 1
    assert json.loads(frames[0].data) == {"s": "one\u2028two\u2029three"}


def test_last_line_without_lf_is_still_a_record() -> None:
    frames = split_all(b'{"a":1}\n{"b":2}')
    assert [f.data for f in frames] == [b'{"a":1}', b'{"b":2}']


def test_nothing_after_the_last_lf_means_no_extra_record() -> None:
    assert [f.data for f in split_all(b"x\n")] == [b"x"]
    assert split_all(b"") == []


def test_a_lone_cr_in_the_middle_is_data() -> None:
    assert [f.data for f in split_all(b"a\rb\n")] == [b"a\rb"]


def test_oversize_line_is_reported_and_the_next_line_survives() -> None:
    big = b"x" * 5000
    frames = split_all(big + b"\n" + b'{"ok":1}\n', max_line=1000)
    assert frames[0] == Frame(b"", oversize=5000)
    assert frames[1] == Frame(b'{"ok":1}')


def test_exact_limit_is_accepted_and_one_more_byte_is_not() -> None:
    assert split_all(b"y" * 100 + b"\r\n", max_line=100) == [Frame(b"y" * 100)]
    assert split_all(b"y" * 101 + b"\n", max_line=100) == [Frame(b"", oversize=101)]


def test_memory_stays_bounded_while_a_huge_line_streams_in() -> None:
    splitter = LineSplitter(max_line=1024)
    biggest = 0
    for _ in range(160):  # 10 MiB in 64 KiB chunks
        assert splitter.feed(b"z" * 65536) == []
        biggest = max(biggest, len(splitter._buffer))
    assert biggest <= 1025
    assert splitter.feed(b"\n") == [Frame(b"", oversize=160 * 65536)]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
    crlf=st.booleans(),
)
def test_chunking_never_changes_the_records(
    lines: list[bytes], cuts: list[int], crlf: bool
) -> None:
    sep = b"\r\n" if crlf else b"\n"
    data = b"".join(line + sep for line in lines)
    splitter = LineSplitter()
    frames: list[Frame] = []
    previous = 0
    for cut in sorted({min(c, len(data)) for c in cuts}):
        frames += splitter.feed(data[previous:cut])
        previous = cut
    frames += splitter.feed(data[previous:])
    frames += splitter.finish()
    expected = [line.removesuffix(b"\r") if not crlf else line for line in lines]
    assert [f.data for f in frames] == expected


def test_iter_frames_reads_a_stream_in_bounded_pieces() -> None:
    stream = io.BytesIO(b'{"a":1}\r\n' + b"q" * 300 + b"\n" + b'{"tail":true}')
    frames = list(iter_frames(stream, max_line=100, chunk=16))
    assert frames == [Frame(b'{"a":1}'), Frame(b"", oversize=300), Frame(b'{"tail":true}')]


@pytest.mark.parametrize(
    ("raw", "code", "reason"),
    [
        (b"{not json", RpcCode.PARSE_ERROR, "invalid-json"),
        (b"\xff\xfe{}", RpcCode.PARSE_ERROR, "not-utf8"),
        (b'{"x": NaN}', RpcCode.PARSE_ERROR, "non-finite-number"),
        (b'{"x": ' + b"9" * 5000 + b"}", RpcCode.PARSE_ERROR, "number-too-long"),
        (b'{"x": 1e400}', RpcCode.PARSE_ERROR, "number-out-of-range"),
        (b"", RpcCode.PARSE_ERROR, "invalid-json"),
    ],
)
def test_decode_errors_are_typed(raw: bytes, code: int, reason: str) -> None:
    with pytest.raises(Exception) as caught:
        decode_request(Frame(raw))
    fault = caught.value
    assert getattr(fault, "code", None) == code
    assert getattr(fault, "data", {})["reason"] == reason


def test_oversize_frame_decodes_to_an_invalid_request() -> None:
    with pytest.raises(Exception) as caught:
        decode_request(Frame(b"", oversize=MAX_LINE_BYTES + 5))
    assert getattr(caught.value, "code", None) == RpcCode.INVALID_REQUEST
    assert getattr(caught.value, "data", {})["sizeBytes"] == MAX_LINE_BYTES + 5


def test_encoded_messages_are_one_line_even_with_separators_inside() -> None:
    line = encode_message({"text": "a\nb\u2028c"})
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert json.loads(line) == {"text": "a\nb\u2028c"}


def test_duplicate_keys_are_a_parse_error_not_last_one_wins() -> None:
    from guard._errors import RpcFault
    from guard._sidecar.framing import Frame, decode_request

    frame = Frame(data=b'{"jsonrpc":"2.0","id":1,"method":"health","method":"record"}', oversize=0)
    with pytest.raises(RpcFault) as caught:
        decode_request(frame)
    assert "duplicate-key" in repr(caught.value.__dict__)
