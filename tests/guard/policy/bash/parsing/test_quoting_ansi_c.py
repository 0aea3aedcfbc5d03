"""``$'…'`` strings: escapes decoded exactly, or the word is unresolvable (fail closed).

Checked on ``decode_ansi_c`` (the exact decoded text, boundaries of ``\\xHH`` and octal) and
through the analysis: the argv value a ``$'…'`` word yields, and a command name it hides.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.parsing.quoting import decode_ansi_c
from guard._policy.bash.walker import analyze


@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ("", ""),
        ("plain", "plain"),
        ("\\n", "\n"),
        ("\\t", "\t"),
        ("a\\nb", "a\nb"),
        ("\\\\", "\\"),
        ("\\'", "'"),
        ("\\e[0m", "\x1b[0m"),
    ],
)
def test_simple_escapes_are_decoded(body: str, decoded: str) -> None:
    assert decode_ansi_c(body) == decoded


@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ("\\x72m", "rm"),
        ("\\x4A", "J"),
        ("\\x4a", "J"),
        ("\\x4Ax", "Jx"),
        ("\\xAm", "\nm"),
        ("\\x7", "\x07"),
        ("\\x411", "A1"),
        ("\\x01", "\x01"),
        ("\\x1", "\x01"),
        ("\\x7f", "\x7f"),
        ("\\x7F", "\x7f"),
        ("r\\x6D", "rm"),
    ],
)
def test_hex_escapes_below_0x80_are_decoded(body: str, decoded: str) -> None:
    assert decode_ansi_c(body) == decoded


@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ("\\162m", "rm"),
        ("\\1", "\x01"),
        ("\\01", "\x01"),
        ("\\001", "\x01"),
        ("\\0011", "\x011"),
        ("\\101", "A"),
        ("\\177", "\x7f"),
        ("\\78", "\x078"),
    ],
)
def test_octal_escapes_below_0x80_are_decoded(body: str, decoded: str) -> None:
    assert decode_ansi_c(body) == decoded


@pytest.mark.parametrize(
    "body",
    [
        "\\",
        "a\\",
        "rm\\",
        "\\x",
        "\\xg",
        "\\xZZ",
        "a\\x",
        "\\x00",
        "\\x0",
        "\\0",
        "\\000",
        "r\\0m",
        "\\x80",
        "\\x81",
        "\\xff",
        "\\200",
        "\\377",
        "\\u0072",
        "\\U00000072",
        "\\cA",
        "\\X41",
        "\\8",
        "\\q",
    ],
)
def test_escapes_not_fully_decoded_make_the_word_unresolvable(body: str) -> None:
    assert decode_ansi_c(body) is None


def _argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("$'\\x72\\x6D' -rf x", [["rm", "-rf", "x"]]),
        ("$'\\x72\\x6d' -rf x", [["rm", "-rf", "x"]]),
        ("$'r\\155' -rf x", [["rm", "-rf", "x"]]),
        ("echo $'\\x7f'", [["echo", "\x7f"]]),
        ("echo $'\\x01'", [["echo", "\x01"]]),
        ("echo $'\\x80'", [["echo", None]]),
        ("echo $'\\x00'", [["echo", None]]),
        ("echo $'a\\'", [["echo", None]]),
        ("echo $'\\xq'", [["echo", None]]),
    ],
)
def test_ansi_c_words_in_commands(command: str, expected: list[list[str | None]]) -> None:
    assert _argvs(command) == expected


@pytest.mark.parametrize("command", ["$'\\x80rm' x", "$'r\\0m' x", "$'\\xzz' x"])
def test_a_command_name_hidden_by_an_undecoded_escape_is_dynamic(command: str) -> None:
    checks = [f.check for f in analyze(command, cwd="/w", home="/h").findings]
    assert "dynamic-command" in checks
