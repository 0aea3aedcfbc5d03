"""Tool names: what is refused and what the refusal says (mutmut survivors of fingerprint.py)."""

from __future__ import annotations

from typing import Any

import pytest

from guard import BadInputError
from guard._evidence.fingerprint import MAX_TOOL_NAME_CHARS, normalize_tool_name


@pytest.mark.parametrize("name", ["", None, 7, ["bash"]])
def test_empty_or_non_string_names_are_refused(name: Any) -> None:
    with pytest.raises(BadInputError) as refused:
        normalize_tool_name(name)
    assert (refused.value.what, refused.value.problem) == (
        "tool name",
        "must be a non-empty string",
    )
    if name is not None:
        assert refused.value.value is not None  # the refused value is shown


def test_the_length_limit_is_inclusive() -> None:
    assert normalize_tool_name("x" * MAX_TOOL_NAME_CHARS) == "x" * MAX_TOOL_NAME_CHARS
    with pytest.raises(BadInputError) as refused:
        normalize_tool_name("x" * (MAX_TOOL_NAME_CHARS + 1))
    assert (refused.value.what, refused.value.problem) == (
        "tool name",
        f"longer than {MAX_TOOL_NAME_CHARS} characters",
    )
    assert refused.value.value is not None and refused.value.value.startswith("xxx")


@pytest.mark.parametrize("name", ["bash\n", "re\x07d", "\x1b[31mwrite", "edit\x7f"])
def test_control_characters_are_refused_and_the_name_shown(name: str) -> None:
    with pytest.raises(BadInputError) as refused:
        normalize_tool_name(name)
    assert (refused.value.what, refused.value.problem) == (
        "tool name",
        "contains control characters",
    )
    assert refused.value.value is not None and refused.value.value.strip("\n\x07\x1b\x7f")
    assert str(refused.value).startswith("tool name: contains control characters (got ")
