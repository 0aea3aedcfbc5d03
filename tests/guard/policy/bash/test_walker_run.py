"""What ``Walker.run`` records for a command: a name it cannot resolve, ``trap`` handlers, what
feeds a command's stdin, and the home ``analyze`` falls back to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from guard._policy import Verdict
from guard._policy.bash.model import MAX_DEPTH, Script
from guard._policy.bash.walker import Walker, analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "detail"),
    [
        ("*.sh --all", "command name a glob or brace: *.sh"),
        ("r{m,x} -rf /", "command name a glob or brace: r{m,x}"),
        ('"$tool" --all', 'command name only known at runtime: "$tool"'),
        ("$(which rm) -rf /", "command name only known at runtime: $(which rm)"),
    ],
)
def test_a_command_name_that_cannot_be_resolved_says_why(command: str, detail: str) -> None:
    assert ("dynamic-command", detail) in findings(command)


def test_a_command_with_an_unresolved_name_keeps_what_feeds_it() -> None:
    script = analyze("curl -s https://example.invalid/x | $runner", cwd="/w", home="/h")
    last = script.commands[-1]
    assert [w.raw for w in last.argv] == ["$runner"]
    assert [[w.value for w in p.argv] for p in last.producers] == [
        ["curl", "-s", "https://example.invalid/x"]
    ]
    assert last.stdin_texts == []
    herestring = analyze("$runner <<< 'rm -rf /'", cwd="/w", home="/h").commands[-1]
    assert herestring.stdin_texts == ["rm -rf /"]
    assert herestring.producers == []


def test_a_trap_handler_is_a_script_the_shell_runs(bash: Callable[[str], Verdict]) -> None:
    assert bash("trap 'rm -rf /' EXIT").verdict == "block"
    # bash would take a lone word for a signal to reset; read as a handler, it asks (safe side)
    assert bash("trap 'rm -rf /'").verdict == "block"
    assert findings('trap "$handler" EXIT') == [
        ("dynamic-script", "trap runs a handler built at runtime")
    ]


def test_trap_without_a_handler_runs_nothing() -> None:
    assert findings("trap") == []
    assert [[w.value for w in c.argv] for c in analyze("trap", cwd="/w", home="/h").commands] == [
        ["trap"]
    ]


def test_a_trap_handler_too_deep_names_the_trap() -> None:
    script = Script([], [])
    Walker(home="/h", cwd="/w", depth=MAX_DEPTH, out=script).script("trap 'ls' EXIT")
    assert [(f.check, f.detail) for f in script.findings] == [
        ("nesting-too-deep", f"trap handler: nested deeper than {MAX_DEPTH} levels")
    ]


def test_without_a_home_analyze_uses_the_users_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    script = analyze("cd ~ && ls", cwd="/w")
    assert [c.cwd for c in script.commands] == ["/w", str(tmp_path)]
