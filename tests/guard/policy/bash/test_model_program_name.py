"""``program_name``: the program a static command word names, as the rules match it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.model import Word, program_name


@pytest.mark.parametrize(
    ("value", "program"),
    [
        ("rm", "rm"),
        ("/usr/bin/rm", "rm"),
        ("./bin/runX", "runX"),
        ("/opt/X/toolX", "toolX"),
        # bash refuses a trailing slash (not a directory); read as the program it names, it
        # is matched by the program's rules (the safe side)
        ("/usr/bin/rm/", "rm"),
        ("rm//", "rm"),
        ("/", "/"),
    ],
)
def test_the_program_is_the_basename(value: str, program: str) -> None:
    assert program_name(Word(value, value)) == program


def test_a_name_only_known_at_runtime_has_no_program() -> None:
    assert program_name(Word(None, "$cmd")) is None


def test_a_trailing_slash_does_not_hide_rm(bash: Callable[[str], Verdict]) -> None:
    assert bash("/usr/bin/rm/ -rf /").verdict == "block"
