"""Brace expansion of unquoted words: bash's order, ranges, and the limits past which it asks.

Checked directly on ``expand_braces`` (the exact list of words bash would produce) and through
the paths a command mentions, where a brace it cannot bound leaves a path-less mention (asks).
"""

from __future__ import annotations

import posixpath
import string

import pytest

from guard._policy.bash.parsing.quoting import expand_braces
from guard._policy.bash.walker import analyze
from guard._policy.matching.paths import command_mentions


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{a,b}{c,d}", ["ac", "ad", "bc", "bd"]),
        ("{x}{a,b}{c,d}", ["{x}ac", "{x}ad", "{x}bc", "{x}bd"]),
        ("{a,{b,c}}", ["a", "b", "c"]),
        ("{a,{b,c}d}", ["a", "bd", "cd"]),
    ],
)
def test_comma_lists_expand_left_to_right_like_bash(text: str, words: list[str]) -> None:
    assert expand_braces(text) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a{b}c", ["a{b}c"]),
        ("{x}{a,b}", ["{x}a", "{x}b"]),
        ("{x}{a,b}{y}", ["{x}a{y}", "{x}b{y}"]),
        ("{{a,b}", ["{a", "{b"]),
        ("}{a,b}", ["}a", "}b"]),
        ("{}{a,b}", ["{}a", "{}b"]),
    ],
)
def test_a_brace_that_is_not_an_expression_is_kept_and_the_next_one_expands(
    text: str, words: list[str]
) -> None:
    assert expand_braces(text) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{a..c}", ["a", "b", "c"]),
        ("{A..C}", ["A", "B", "C"]),
        ("{c..a}", ["c", "b", "a"]),
        ("{C..A}", ["C", "B", "A"]),
        ("{a..a}", ["a"]),
        ("{X..Z}", ["X", "Y", "Z"]),
        ("x{a..b}y", ["xay", "xby"]),
    ],
)
def test_letter_ranges_count_up_or_down(text: str, words: list[str]) -> None:
    assert expand_braces(text) == words


def test_the_widest_letter_range_is_expanded_whole() -> None:
    up = expand_braces("{A..z}")
    down = expand_braces("{z..A}")
    assert up is not None
    assert down is not None
    assert len(up) == len(down) == ord("z") - ord("A") + 1
    assert (up[0], up[-1], down[0], down[-1]) == ("A", "z", "z", "A")
    assert set(string.ascii_letters) <= set(up)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{1..3}", ["1", "2", "3"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{5..5}", ["5"]),
        ("{-2..2}", ["-2", "-1", "0", "1", "2"]),
        ("{2..-1}", ["2", "1", "0", "-1"]),
        ("{100..101}", ["100", "101"]),
        ("{101..100}", ["101", "100"]),
        ("{1..10..3}", ["1", "4", "7", "10"]),
        ("{1..10..-3}", ["1", "4", "7", "10"]),
        ("{10..1..3}", ["10", "7", "4", "1"]),
        ("{10..1..-3}", ["10", "7", "4", "1"]),
        ("{1..8..3}", ["1", "4", "7"]),
        ("{8..1..3}", ["8", "5", "2"]),
        ("{1..3..0}", ["1", "2", "3"]),
        ("{3..1..0}", ["3", "2", "1"]),
        ("{1..3..1}", ["1", "2", "3"]),
    ],
)
def test_numeric_ranges_count_up_or_down_by_the_step(text: str, words: list[str]) -> None:
    assert expand_braces(text) == words


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("{1..64}", 64),
        ("{64..1}", 64),
        ("{1..127..2}", 64),
        ("{a,b}" * 6, 64),
        ("{1..32}{a,b}", 64),
        ("{a..z}{a,b}", 52),
    ],
)
def test_up_to_sixty_four_words_are_expanded(text: str, count: int) -> None:
    words = expand_braces(text)
    assert words is not None
    assert len(words) == count
    assert len(set(words)) == count


@pytest.mark.parametrize(
    "text",
    [
        "{1..65}",
        "{65..1}",
        "{1..129..2}",
        "{1..130..2}",
        "{1..100000}",
        "{-50..50}",
        "{a,b}" * 7,
        "{1..33}{a,b}",
        "{a..z}{a..c}",
        "x{1..64}{a,b}",
    ],
)
def test_more_than_sixty_four_words_is_unsure(text: str) -> None:
    assert expand_braces(text) is None


def test_eight_nested_expansions_are_followed_and_a_ninth_is_unsure() -> None:
    assert expand_braces("{1..1}" * 8) == ["1" * 8]
    assert expand_braces("{a,b}" + "{1..1}" * 7) == ["a" + "1" * 7, "b" + "1" * 7]
    assert expand_braces("{1..1}" * 9) is None
    assert expand_braces("{a,b}" + "{1..1}" * 8) is None


def _mentioned_paths(command: str) -> list[str | None]:
    script = analyze(command, cwd="/w", home="/h")
    out: list[str | None] = []
    for cmd in script.commands:
        mentions = command_mentions(
            cmd, lambda path, cwd: posixpath.normpath(posixpath.join(cwd, path)), "/h"
        )
        out.extend(m.path for m in mentions)
    return out


def test_a_braced_path_names_every_expansion() -> None:
    paths = _mentioned_paths("rm -rf src/{b,a}/x")
    assert paths[:2] == ["/w/src/b/x", "/w/src/a/x"]
    assert "/w/src/{b,a}/x" in paths


def test_a_descending_range_path_names_every_expansion() -> None:
    paths = _mentioned_paths("rm -rf d{3..1}")
    assert {"/w/d3", "/w/d2", "/w/d1"} <= set(paths)


def test_a_brace_path_too_big_to_bound_is_a_mention_without_a_path() -> None:
    assert _mentioned_paths("rm -rf d{1..65}") == [None]
    assert _mentioned_paths("rm -rf d" + "{1..1}" * 9) == [None]
