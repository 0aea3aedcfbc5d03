"""Quoting a value back into one shell word (used to rebuild ``env -S`` command lines).

Plainly safe text stays as it is; anything else is single-quoted so that bash reads back the
very same value as one word.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.parsing.quoting import shell_quote
from guard._policy.bash.walker import analyze


@pytest.mark.parametrize(
    "text",
    ["x", "rm", "Abc", "ABC", "aZ09", "src/a.py", "-rf", "--x=1", "a:b@c%d+e,f", "_"],
)
def test_plainly_safe_text_is_left_unquoted(text: str) -> None:
    assert shell_quote(text) == text


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("", "''"),
        ("a b", "'a b'"),
        ("$HOME", "'$HOME'"),
        ("*", "'*'"),
        ("a;b", "'a;b'"),
        ("it's", "'it'\\''s'"),
        ("'", "''\\'''"),
        ("é", "'é'"),
        ("a\nb", "'a\nb'"),
    ],
)
def test_other_text_is_single_quoted(text: str, quoted: str) -> None:
    assert shell_quote(text) == quoted


@pytest.mark.parametrize(
    "text", ["", "x", "a b", "it's", "''", "a'b'c", "$(rm -rf /)", "`x`", '"', "\\", "a\tb"]
)
def test_bash_reads_the_quoted_text_back_as_one_word(text: str) -> None:
    assert shlex.split(shell_quote(text)) == [text]


def test_env_split_string_keeps_each_following_argument_one_word() -> None:
    script = analyze("env -S 'rm -rf' 'a b' \"it's\" '' Abc", cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands if c.argv] == [
        ["rm", "-rf", "a b", "it's", "", "Abc"]
    ]
    assert [[w.raw for w in c.argv] for c in script.commands if c.argv] == [
        ["rm", "-rf", "'a b'", "'it'\\''s'", "''", "Abc"]
    ]
