"""Sensitive variables: assigning one (by name or by a code-loading prefix) asks."""

from __future__ import annotations

import pytest

from guard._policy.bash.model import Word, sensitive_variable
from guard._policy.bash.walker import Finding, analyze


def _assigns(name: str) -> Finding:
    return Finding(
        "shell-environment",
        f"assigns {name}, which changes what later commands run or where their paths point",
    )


@pytest.mark.parametrize(
    "name",
    [
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "GIT_CONFIG_KEY_12",
        "BASH_FUNC_ls",
        "LD_PRELOAD",
        "LD_DEBUG",
        "LD_BIND_NOW",
        "PATH",
        "CDPATH",
    ],
)
def test_assigning_a_sensitive_variable_asks(name: str) -> None:
    assert sensitive_variable(name)
    for command in (f"{name}=x ls", f"export {name}=x", f"env {name}=x ls"):
        assert analyze(command, cwd="/w", home="/h").findings == [_assigns(name)], command


@pytest.mark.parametrize(
    "name", ["GIT_CONFIG_KEYS", "GIT_CONFIG_KEY", "BASH_FUNCS", "LDX", "ld_preload", "FOO"]
)
def test_assigning_an_ordinary_variable_does_not_ask(name: str) -> None:
    assert not sensitive_variable(name)
    assert analyze(f"{name}=x ls", cwd="/w", home="/h").findings == []


def test_a_literal_word_is_its_own_raw_text() -> None:
    word = Word.literal("a b")
    assert (word.value, word.raw, word.glob, word.brace, word.inner) == (
        "a b",
        "a b",
        False,
        False,
        (),
    )
