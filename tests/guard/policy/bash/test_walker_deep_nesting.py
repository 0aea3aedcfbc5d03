"""A command nested deeper than Python can walk asks, with one ``too-complex`` finding."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze

DEEP = 3000


@pytest.mark.parametrize(
    "command",
    [
        "{ " * DEEP + "ls" + "; }" * DEEP,
        "(" * DEEP + "ls" + ")" * DEEP,
        "if true; then " * DEEP + "ls" + "; fi" * DEEP,
    ],
    ids=["braces", "subshells", "ifs"],
)
def test_nesting_too_deep_to_walk_asks(bash: Callable[[str], Verdict], command: str) -> None:
    findings = [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]
    assert findings == [("too-complex", "the command is nested too deeply to analyze")]
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.too-complex" in verdict.rule_ids
