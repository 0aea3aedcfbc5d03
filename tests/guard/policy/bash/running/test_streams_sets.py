"""The program lists of the stream helpers: written as whitespace-separated text, read as sets."""

from __future__ import annotations

import pytest

from guard._policy.bash.model import Command, Word
from guard._policy.bash.running import streams


def test_program_list_text_splits_on_any_whitespace() -> None:
    assert streams._set(" curl  wget\n\tfetch ") == frozenset({"curl", "wget", "fetch"})
    assert streams._set("") == frozenset()


@pytest.mark.parametrize("program", ["curl", "wget", "fetch", "http", "https", "xh", "aria2c"])
def test_every_listed_downloader_is_recognized(program: str) -> None:
    producer = Command((Word.literal(program), Word.literal("https://x.io/a")), "/w")
    assert streams.from_downloader([producer])


@pytest.mark.parametrize("program", ["cat", "echo", "curlx", "lwp"])
def test_other_programs_are_not_downloaders(program: str) -> None:
    producer = Command((Word.literal(program), Word.literal("x")), "/w")
    assert not streams.from_downloader([producer])
