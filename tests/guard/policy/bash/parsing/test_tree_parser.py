"""The shared tree-sitter parser: created on first use, then reused."""

from __future__ import annotations

import pytest

from guard._policy.bash.parsing import tree
from guard._policy.bash.walker import analyze


def test_the_parser_is_created_on_first_use_and_then_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tree, "_PARSER", None)
    script = analyze("rm -rf build", cwd="/w", home="/h")
    assert [[w.value for w in c.argv] for c in script.commands] == [["rm", "-rf", "build"]]
    first = tree._PARSER
    assert first is not None
    analyze("ls", cwd="/w", home="/h")
    assert tree._PARSER is first
