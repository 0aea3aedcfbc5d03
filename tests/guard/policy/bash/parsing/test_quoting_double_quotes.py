"""A line continuation inside double quotes is removed, as bash does, not read as a newline.

``bash -c "git reset \\<newline>--hard"`` runs ``git reset --hard``: the code string must be
checked as that, not as two commands ``git reset`` and ``--hard``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.parsing.quoting import unquote_double
from guard._policy.bash.walker import analyze


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a\\\nb", "ab"),
        ("a \\\nb", "a b"),
        ("\\\n", ""),
        ("a\\\\\nb", "a\\\nb"),
        ("a\\\\\\\nb", "a\\b"),
        ("a\nb", "a\nb"),
    ],
)
def test_backslash_newline_in_double_quotes_is_removed(text: str, value: str) -> None:
    assert unquote_double(text) == value


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('bash -c "git reset \\\n--hard"', [["git", "reset", "--hard"]]),
        ('bash -c "rm -rf \\\n/"', [["rm", "-rf", "/"]]),
        ('echo "a \\\nb"', [["echo", "a b"]]),
    ],
)
def test_code_strings_joined_by_a_continuation_are_read_whole(
    command: str, expected: list[list[str | None]]
) -> None:
    script = analyze(command, cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands if c.argv] == expected


def test_a_hard_reset_split_over_a_continuation_still_asks(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash('bash -c "git reset \\\n--hard"')
    assert verdict.verdict == "confirm"
    assert "builtin.git-reset-hard" in verdict.rule_ids


def test_deleting_root_split_over_a_continuation_is_blocked(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash('bash -c "rm -rf \\\n/"')
    assert verdict.verdict == "block"
    assert "builtin.catastrophic-target" in verdict.rule_ids
