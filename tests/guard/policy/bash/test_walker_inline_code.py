"""Inline code (``node -e``, ``python -c`` …): the small allowlist, the guard block, its strings."""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import Finding, analyze


def findings(command: str) -> list[Finding]:
    return analyze(command, cwd="/w", home="/h").findings


def code_strings(command: str) -> list[tuple[str, ...]]:
    return [c.code_strings for c in analyze(command, cwd="/w", home="/h").commands]


@pytest.mark.parametrize(
    "command",
    [
        "node -e 'console.log(1)'",
        "nodejs -e 'console.log(process.version)'",
        "node -p process.version",
        "nodejs -p process.platform",
        "node -p '1 + 2'",
        "node --print '\"x\"'",
    ],
)
def test_harmless_node_code_is_allowed(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "detail"),
    [
        ("node -e '1'", "inline node code: 1"),
        ("node -e process.version", "inline node code: process.version"),
        ("node -p 'x()'", "inline node code: x()"),
        ("nodejs -p 'require(\"fs\")'", 'inline nodejs code: require("fs")'),
        ("perl -e 'print 1'", "inline perl code: print 1"),
        ("python3 -c 'open(1)'", "inline python code: open(1)"),
    ],
)
def test_other_inline_code_asks_and_shows_the_code(command: str, detail: str) -> None:
    assert findings(command) == [Finding("inline-code", detail)]


def test_inline_code_naming_the_guard_is_reported() -> None:
    assert findings("python3 -c 'import guard'") == [
        Finding("guard-self", "inline code reaches for the guard: import guard"),
        Finding("inline-code", "inline python code: import guard"),
    ]


def test_allowed_node_code_naming_the_guard_is_still_reported() -> None:
    assert findings("node -e 'console.log(\"guard.x\")'") == [
        Finding("guard-self", 'inline code reaches for the guard: console.log("guard.x")')
    ]


@pytest.mark.parametrize(
    ("command", "strings"),
    [
        ("python3 -c 'open(\"/etc/passwd\")'", ("/etc/passwd",)),
        ("python3 -c \"open('x')\"", ("x",)),
        ('node -e \'fs.rmSync("a", "b")\'', ("a", "b")),
        ('node -e "fs.cpSync(\'a\', \\"b\\")"', ("a", "b")),
        ("perl -e 'unlink(\"a\")' -e 'unlink(\"b\")'", ("a", "b")),
        ("node -e 'process.exit(1)'", ()),
    ],
)
def test_string_literals_in_inline_code_are_kept_as_possible_paths(
    command: str, strings: tuple[str, ...]
) -> None:
    assert code_strings(command) == [strings]
