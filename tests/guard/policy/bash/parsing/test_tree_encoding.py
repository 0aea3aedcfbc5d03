"""Text that is not plain UTF-8: lone surrogates, characters outside the BMP, broken bytes.

A command string may hold lone surrogates (``os.fsdecode`` turns undecodable bytes into
``\\udc80``…) and characters outside the BMP, which crash tree-sitter-bash after a ``{``:
the analysis reads them as U+FFFD and keeps the structure. The node-text helper decodes
whatever bytes a node covers without raising.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.parsing import tree
from guard._policy.bash.walker import analyze

FFFD = "\ufffd"


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("rm -rf build\udc80", ["rm", "-rf", "build" + FFFD]),
        ("rm -rf \ud800x \udfffy", ["rm", "-rf", FFFD + "x", FFFD + "y"]),
        ("rm -rf \U0001f600", ["rm", "-rf", FFFD]),
        ("rm -rf {\U0001f600,b}", ["rm", "-rf", "{" + FFFD + ",b}"]),
        ("rm -rf caf\u00e9 \u65e5\u672c", ["rm", "-rf", "caf\u00e9", "\u65e5\u672c"]),
    ],
)
def test_surrogates_and_non_bmp_characters_read_as_replacement_characters(
    command: str, runs: list[str]
) -> None:
    assert argvs(command) == [runs]
    assert checks(command) == []


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("echo ${x#$(rm -rf a\udc80)}", ["rm", "-rf", "a" + FFFD]),
        ("echo ${x#$(rm -rf \U0001f600)}", ["rm", "-rf", FFFD]),
        ("[[ x =~ \udc80$(rm -rf a) ]]", ["rm", "-rf", "a"]),
    ],
)
def test_a_pattern_with_surrogates_still_runs_its_substitution(
    command: str, runs: list[str]
) -> None:
    assert runs in argvs(command)


def test_a_surrogate_in_a_command_that_does_not_parse_is_a_parse_error() -> None:
    command = "echo $((rm -rf \udc80x))"
    assert ["rm", "-rf", FFFD + "x"] in argvs(command)
    assert "parse-error" in checks(command)


def test_ascii_text_is_given_to_the_parser_unchanged() -> None:
    text = "rm -rf {a,b} $'\\x41' \\\\ ~"
    assert tree.parser_safe(text) == text


def test_the_parser_gets_no_surrogate_and_no_non_bmp_character() -> None:
    assert tree.parser_safe("a\udc80b\U0001f600c\u00e9") == "a" + FFFD + "b" + FFFD + "c\u00e9"


def _root_text(data: bytes) -> str:
    return tree.node_text(tree.parser().parse(data).root_node)


def test_node_text_is_decoded_as_utf8() -> None:
    assert _root_text("echo caf\u00e9".encode()) == "echo caf\u00e9"


def test_node_text_keeps_an_encoded_surrogate() -> None:
    assert _root_text(b"echo a\xed\xb2\x80") == "echo a\udc80"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"echo a\xff", "echo a" + FFFD),
        (b"echo \xc3", "echo " + FFFD),
        (b"echo \xff\xed\xb2\x80", "echo " + FFFD * 4),
    ],
)
def test_node_text_with_broken_utf8_is_replaced_not_raised(data: bytes, text: str) -> None:
    assert _root_text(data) == text


def test_the_text_of_a_node_of_an_edited_tree_is_empty() -> None:
    parsed = tree.parser().parse(b"echo hi")
    parsed.edit(
        start_byte=0,
        old_end_byte=4,
        new_end_byte=5,
        start_point=(0, 0),
        old_end_point=(0, 4),
        new_end_point=(0, 5),
    )
    assert parsed.root_node.text is None
    assert tree.node_text(parsed.root_node) == ""
