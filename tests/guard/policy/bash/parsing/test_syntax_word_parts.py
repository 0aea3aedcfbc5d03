"""How the parts of one word are put together: bare ``$`` signs, brace ranges and the commands
substituted inside arithmetic or inside a word tree-sitter-bash cannot parse.

A substitution's commands travel with the word (``Word.inner``) so that ``bash -c``, ``source``
or a shell running a generated script can tell code downloaded from the network apart.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.model import Script
from guard._policy.bash.walker import analyze


def run(command: str) -> Script:
    return analyze(command, cwd="/w", home="/h")


def argvs(command: str) -> list[list[str | None]]:
    return [[w.value for w in c.argv] for c in run(command).commands if c.argv]


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in run(command).findings]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("echo a$", ["echo", "a$"]),
        ("echo a$ b$$", ["echo", "a$", "b$$"]),
        ("echo 1,$", ["echo", "1,$"]),
        ("rm -rf build$", ["rm", "-rf", "build$"]),
    ],
)
def test_a_bare_dollar_sign_stays_part_of_the_word(command: str, argv: list[str]) -> None:
    assert argvs(command) == [argv]
    assert findings(command) == []


def test_a_brace_range_as_the_command_name_is_not_a_known_program() -> None:
    script = run("{1..3}")
    assert [w.brace for c in script.commands for w in c.argv] == [True]
    assert findings("{1..3}") == [("dynamic-command", "command name a glob or brace: {1..3}")]


def test_cd_to_a_brace_range_leaves_the_directory_unknown() -> None:
    script = run("cd {1..3} && rm -rf x")
    assert [(f.check, f.detail) for f in script.findings] == [
        ("unresolved", "cd to a directory only known at runtime: {1..3}")
    ]
    assert [(c.program, c.cwd) for c in script.commands] == [("cd", "/w"), ("rm", "/w")]


_DOWNLOADED = "code downloaded from the network is executed"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "bash -c $(( $(curl x) ))",
            [("download-exec", "bash -c runs code downloaded from the network")],
        ),
        (
            "bash -c $(( `curl x` ))",
            [("download-exec", "bash -c runs code downloaded from the network")],
        ),
        (
            "bash -c $[ $(curl x) ]",
            [("download-exec", "bash -c runs code downloaded from the network")],
        ),
        (
            "bash $(( $(curl x) ))",
            [("download-exec", "bash runs a generated script: " + _DOWNLOADED)],
        ),
        (
            "source $(( $(curl x) ))",
            [
                ("download-exec", "source of generated code: " + _DOWNLOADED),
                ("shell-stdin", "source runs code from stdin or a stream"),
            ],
        ),
    ],
)
def test_a_download_substituted_in_arithmetic_is_seen_as_downloaded_code(
    command: str, expected: list[tuple[str, str]]
) -> None:
    assert findings(command) == expected
    assert argvs(command)[0] == ["curl", "x"]


def test_a_substitution_in_arithmetic_is_part_of_the_word() -> None:
    script = run("echo $(( $(rm q) ))")
    echo = [c for c in script.commands if c.program == "echo"]
    assert [w.value for w in echo[0].argv] == ["echo", None]
    assert [[w.value for w in c.argv] for c in echo[0].argv[1].inner] == [["rm", "q"]]


def test_process_substitutions_in_a_word_that_does_not_parse_are_part_of_the_word() -> None:
    # tree-sitter-bash keeps "<(curl x)<(curl x)" in an ERROR node here: the downloads it
    # runs are still the script bash runs, in both readings of "((".
    command = "bash <(curl x)<(curl x) ((,))"
    generated = ("download-exec", "bash runs a generated script: " + _DOWNLOADED)
    assert findings(command) == [
        ("parse-error", "the command does not parse as bash: " + command),
        generated,
        generated,
    ]
