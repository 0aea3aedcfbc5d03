"""A shell's stdin set through a descriptor: ``0<FILE``, ``<&3``, and ``exec <FILE``.

``bash 0< evil.sh`` and ``sh 0<<<'rm -rf /'`` run their stdin like ``bash < evil.sh``, but
tree-sitter-bash reads a ``0`` glued to a redirection as an argument, so the analysis saw a
shell running a script file named ``0`` and allowed them. ``<&3`` makes stdin a copy of
another descriptor, and ``exec <FILE`` redirects the stdin of every later command in the
script; a shell reading that stdin asks like any other.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def argvs(command: str) -> list[list[str | None]]:
    return [
        [w.value for w in c.argv] for c in analyze(command, cwd="/w", home="/h").commands if c.argv
    ]


@pytest.mark.parametrize(
    "command",
    [
        "bash 0< evil.sh",
        "bash 0<evil.sh",
        "sh -s 0< evil.sh",
        "python3 0< evil.py",
        "bash 0<&3",
        "bash <&3",
        "exec 3< evil.sh; bash <&3",
        "exec < evil.sh; bash",
        "exec 0< evil.sh; bash",
        "exec <&3; sh",
        "exec < evil.sh\nls\nsh",
        "exec < evil.sh; echo $(sh)",
        "exec < evil.sh; bash -c sh",
        "cat 0<f | bash",
        "0<evil.sh bash",
        "x=1 0<evil.sh bash",
    ],
)
def test_a_shell_whose_stdin_is_a_file_or_another_descriptor_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    result = bash(command)
    assert result.verdict == "confirm"
    assert "builtin.shell-stdin" in result.rule_ids


@pytest.mark.parametrize("command", ["sh 0<<<'rm -rf /'", "bash 0<<<'rm -rf /'"])
def test_a_herestring_or_heredoc_on_descriptor_0_is_the_script_the_shell_runs(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert bash(command).verdict == "block"


def test_a_heredoc_on_descriptor_0_asks(bash: Callable[[str], Verdict]) -> None:
    # tree-sitter-bash cannot parse it: the parse error asks
    assert bash("bash 0<<EOF\nrm -rf /\nEOF").verdict == "confirm"


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("rm -rf x 0<f", ["rm", "-rf", "x"]),
        ("head -n 0<f", ["head", "-n"]),
        ("echo 10<f", ["echo"]),
        ("echo 0 <f", ["echo", "0"]),  # a space: an argument, not a descriptor
        ("echo 1 >f", ["echo", "1"]),
        ("echo 0", ["echo", "0"]),
        ("0<f cat", ["cat"]),
        ("0 <f bash", ["0", "bash"]),  # a command named 0
    ],
)
def test_a_number_glued_to_a_redirection_is_its_descriptor_not_an_argument(
    command: str, argv: list[str]
) -> None:
    assert argvs(command) == [argv]


@pytest.mark.parametrize(
    "command",
    [
        "exec 2>/dev/null; bash -c 'echo hi'",
        "exec > build.log; ls",
        "exec 3<&0; cat",
        "(exec < notes.txt); ls",
        "cat <&3",
        "ls 2>&1",
        "exec < notes.txt; cat",
    ],
)
def test_descriptors_that_feed_no_shell_stay_allowed(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert bash(command).verdict == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "bash 2<&3",  # descriptor 2 reads descriptor 3: stdin is untouched
        "bash >&2",  # output duplicated, not input
        "bash <&0",  # stdin from stdin
        "bash <& -",  # stdin closed
        "ls <&3; bash",  # a moved stdin belongs to its own command only
        "ls; bash",
    ],
)
def test_a_bare_shell_whose_stdin_was_not_moved_reads_nothing(command: str) -> None:
    assert [f.check for f in analyze(command, cwd="/w", home="/h").findings] == []
