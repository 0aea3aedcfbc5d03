"""Unquoted and double-quoted words: escapes removed, globs and braces spotted, split words.

Checked on the helpers (exact results) and on what the analysis makes of a command: argv
values, whether a word is a glob or a brace expression, and the finding for a line
continuation that joins a word.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.parsing.quoting import (
    has_brace,
    has_glob,
    splits_a_word,
    unquote_double,
    unquote_word,
)
from guard._policy.bash.walker import analyze


def _words(command: str) -> list[tuple[str | None, bool, bool]]:
    script = analyze(command, cwd="/w", home="/h")
    return [(w.value, w.glob, w.brace) for c in script.commands for w in c.argv[1:]]


def _checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("text", "glob"),
    [
        ("*.py", True),
        ("a?", True),
        ("[ab]", True),
        ("a\\*", False),
        ("a\\*b*", True),
        ("plain", False),
        ("", False),
    ],
)
def test_an_unescaped_glob_character_makes_a_glob(text: str, glob: bool) -> None:
    assert has_glob(text) is glob


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("plain", "plain"),
        ("a\\ b", "a b"),
        ("\\rm", "rm"),
        ("a\\\\b", "a\\b"),
        ("a\\\nb", "ab"),
        ("a\\\n\\\nb", "ab"),
        ("a\\*", "a*"),
    ],
)
def test_unquoted_words_lose_escapes_and_line_continuations(text: str, value: str) -> None:
    assert unquote_word(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("plain", "plain"),
        ("a\\$b", "a$b"),
        ("a\\`b", "a`b"),
        ('a\\"b', 'a"b'),
        ("a\\\\b", "a\\b"),
        ("a\\xb", "a\\xb"),
        ("a\\ b", "a\\ b"),
    ],
)
def test_double_quoted_text_keeps_backslashes_that_escape_nothing(text: str, value: str) -> None:
    assert unquote_double(text) == value


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("echo a\\ b", [("a b", False, False)]),
        ("echo a\\*b *.py", [("a*b", False, False), ("*.py", True, False)]),
        ('echo "a\\$b\\x"', [("a$b\\x", False, False)]),
        ('echo "a\\"b\\\\c"', [('a"b\\c', False, False)]),
        ("echo {a,b}x{ {ab}", [("{a,b}x{", False, True), ("{ab}", False, False)]),
    ],
)
def test_word_values_and_kinds_in_commands(
    command: str, words: list[tuple[str | None, bool, bool]]
) -> None:
    assert _words(command) == words


@pytest.mark.parametrize(
    ("text", "brace"),
    [
        ("{a,b}", True),
        ("x{a,b}", True),
        ("{1..3}", True),
        ("{a,b}x{", True),
        ("{ab}", False),
        ("a,b", False),
        ("a..b", False),
        ("{a", False),
        ("a}{,", False),
        ("}a,b{", False),
        ("", False),
    ],
)
def test_a_brace_word_needs_open_close_and_a_comma_or_range(text: str, brace: bool) -> None:
    assert has_brace(text) is brace


@pytest.mark.parametrize(
    ("command", "brace"),
    [
        ("echo {a,b}x{", True),
        ("echo {ab}", False),
        ("echo a,b", False),
        ("echo a..b", False),
    ],
)
def test_brace_words_are_marked_in_commands(command: str, brace: bool) -> None:
    assert [b for _, _, b in _words(command)] == [brace]


@pytest.mark.parametrize(
    ("text", "splits"),
    [
        ("r\\\nm", True),
        ("rm -rf x\\\ny", True),
        ("X\\\nY", True),
        ("a\\\\\\\nb", True),
        ("\\\nrm", False),
        ("rm \\\n-rf", False),
        ("rm\t\\\n-rf", False),
        ("a;\\\nb", False),
        ("a&\\\nb", False),
        ("a|\\\nb", False),
        ("(\\\nb)", False),
        ("a \\\nb", False),
        ("a\\\\\nb", False),
        ("plain", False),
        ("", False),
    ],
)
def test_a_line_continuation_inside_a_word_is_spotted(text: str, splits: bool) -> None:
    assert splits_a_word(text) is splits


def test_a_line_continuation_joining_a_command_name_is_unresolved() -> None:
    assert "unresolved" in _checks("r\\\nm -rf x")
    assert "unresolved" not in _checks("rm \\\n -rf x")
