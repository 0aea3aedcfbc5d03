"""How commands and code are shown in a finding: whitespace flattened, at most 120 characters."""

from __future__ import annotations

import pytest

from guard._policy.bash.model import preview
from guard._policy.bash.walker import analyze

_EVAL = "eval runs a string as a command: "


def eval_detail(command: str) -> str:
    (finding,) = [f for f in analyze(command, cwd="/w", home="/h").findings if f.check == "eval"]
    return finding.detail


@pytest.mark.parametrize("length", [6, 119, 120])
def test_a_command_up_to_120_characters_is_shown_whole(length: int) -> None:
    command = "eval " + "x" * (length - 5)
    assert eval_detail(command) == _EVAL + command


@pytest.mark.parametrize("length", [121, 122, 300])
def test_a_longer_command_is_cut_to_120_characters_with_an_ellipsis(length: int) -> None:
    command = "eval " + "x" * (length - 5)
    shown = eval_detail(command)[len(_EVAL) :]
    assert shown == command[:119] + "…"
    assert len(shown) == 120


def test_whitespace_is_flattened_before_the_length_is_counted() -> None:
    command = "eval 'a\n\t  b'" + " " * 200
    assert eval_detail(command) == _EVAL + "eval 'a b'"


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [("abcdef", 6, "abcdef"), ("abcdefg", 6, "abcde…"), ("  a \n b  ", 3, "a b"), ("", 5, "")],
)
def test_preview_limit_boundaries(text: str, limit: int, shown: str) -> None:
    assert preview(text, limit) == shown
