"""A nested script's stdin: the commands that feed it reach the commands that read stdin.

``SyntaxWalker.nested(text, why, producers=…)`` walks ``text`` with ``producers`` as the stdin
of its first commands, whether the text parses, does not parse, or only parses once ``((`` is
read as two subshells: a shell in it that reads its program on stdin then runs what the
producers print.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.model import Command, Script, Word
from guard._policy.bash.walker import Walker


def nested_with_stdin(text: str) -> Script:
    out = Script([], [])
    walker = Walker(home="/h", cwd="/w", depth=0, out=out)
    echo = Command((Word.literal("echo"), Word.literal("rm -rf x")), "/w")
    walker.nested(text, "test", producers=[echo])
    return out


@pytest.mark.parametrize(
    ("text", "parse_error"),
    [("sh", False), ("sh )", True), ("((sh) )", True)],
)
def test_a_shell_in_a_nested_script_reads_the_producers_output(
    text: str, parse_error: bool
) -> None:
    out = nested_with_stdin(text)
    argvs = [[w.value for w in c.argv] for c in out.commands]
    assert argvs == [["sh"], ["rm", "-rf", "x"]]
    assert [[w.value for w in p.argv] for p in out.commands[0].producers] == [["echo", "rm -rf x"]]
    assert [f.check for f in out.findings] == [
        *(["parse-error"] if parse_error else []),
        "shell-stdin",
    ]


def test_without_producers_a_nested_shell_reads_nothing() -> None:
    out = Script([], [])
    Walker(home="/h", cwd="/w", depth=0, out=out).nested("sh", "test")
    assert [[w.value for w in c.argv] for c in out.commands] == [["sh"]]
    assert out.commands[0].producers == []
    assert out.findings == []
