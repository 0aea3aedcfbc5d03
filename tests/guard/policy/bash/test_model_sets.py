"""The word lists of the bash model: written as whitespace-separated text, read as sets."""

from __future__ import annotations

import pytest

from guard._policy.bash import model
from guard._policy.bash.model import SENSITIVE_VARIABLES, sensitive_variable


def test_word_list_text_splits_on_any_whitespace() -> None:
    assert model._set("\n    PATH HOME\n\tIFS  PATH\n") == frozenset({"PATH", "HOME", "IFS"})
    assert model._set("") == frozenset()


@pytest.mark.parametrize("name", ["PATH", "CDPATH", "LD_PRELOAD", "PI_CODING_AGENT_DIR", "PS0"])
def test_listed_variables_are_sensitive(name: str) -> None:
    assert name in SENSITIVE_VARIABLES
    assert sensitive_variable(name)


@pytest.mark.parametrize("name", ["FOO", "path", "PS1", "LANG"])
def test_other_variables_are_not_sensitive(name: str) -> None:
    assert name not in SENSITIVE_VARIABLES
    assert not sensitive_variable(name)
