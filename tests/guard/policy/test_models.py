"""Wire shapes of the policy: strict, frozen, camelCase."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from guard._policy import ConfigProblem, Rule, Verdict


def test_verdict_is_camel_case_on_the_wire_and_strict() -> None:
    verdict = Verdict(
        verdict="confirm",
        action_kind="destructive",
        rule_ids=("builtin.rm",),
        reasons=("deletes files",),
        targets=("/p/build",),
    )
    assert verdict.model_dump(mode="json") == {
        "verdict": "confirm",
        "actionKind": "destructive",
        "ruleIds": ["builtin.rm"],
        "reasons": ["deletes files"],
        "targets": ["/p/build"],
        "path": None,
    }
    with pytest.raises(ValidationError):
        Verdict.model_validate({"verdict": "maybe", "actionKind": "destructive"})
    with pytest.raises(ValidationError):
        Verdict.model_validate({"verdict": "allow", "actionKind": "local-safe", "extra": 1})
    with pytest.raises(ValidationError):
        setattr(verdict, "verdict", "allow")  # noqa: B010 - frozen: must raise


def test_config_problem_renders_as_one_line() -> None:
    problem = ConfigProblem(file="a/b.toml", line=7, key="rule[2].flags", message="bad")
    assert str(problem) == "a/b.toml:7: rule[2].flags: bad"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"id": "x", "verdict": "confirm"}, "needs 'paths', 'program' or 'tools'"),
        ({"id": "x", "verdict": "confirm", "paths": ("a",), "program": ("b",)}, "not both"),
        ({"id": "x", "verdict": "confirm", "paths": ("a",), "flags": ("-f",)}, "needs 'program'"),
        ({"id": "x", "verdict": "allow", "tools": ("t",)}, "relaxes"),
        ({"id": "x", "verdict": "confirm", "program": ("p",), "arg_regex": "("}, "regular"),
        ({"id": "X Y", "verdict": "confirm", "tools": ("t",)}, "pattern"),
    ],
)
def test_rule_validation(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Rule.model_validate(data)
