"""``IFS=`` before a comment is an assignment of its own, not a prefix of the next line.

tree-sitter-bash reads ``IFS=/ A=1 # note`` and the command on the next line as one command
node. bash ends the command at the comment: IFS stays changed for the rest of the script, which
asks (``shell-environment``), like ``IFS=/`` on its own line. A real prefix (``IFS=/ read x``)
only changes how that one command splits and does not ask.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "IFS=/ A=1 # note\nread x",
        "A=1 IFS=/ # note\nread x",
        "A=1 IFS=/ B=2 # note\nls",
        "IFS=/ A=1 # one\nB=2 # two\nread x",
        "IFS=/\nread x",
    ],
)
def test_ifs_before_a_comment_is_set_for_the_rest_of_the_script(command: str) -> None:
    assert checks(command) == ["shell-environment"]


@pytest.mark.parametrize(
    "command", ["IFS=/ read x", "A=1 IFS=/ read x", "A=1 B=2 # note\nIFS=/ C=3 read x"]
)
def test_a_prefix_ifs_only_changes_its_own_command(command: str) -> None:
    assert checks(command) == []
