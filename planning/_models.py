"""What every planner model shares: the wire config and the report-only invariants.

Inputs are strict and closed (unknown or doubly-given fields are errors) and every field has
a default, so ``{}`` is a valid input. Results carry flags typed ``Literal[False]`` and
``Literal["none"]``: validation refuses any other value, and ``model_copy`` validates too, so
no code path of ours can produce a result that claims to authorize anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

__all__ = [
    "KEBAB_CASE",
    "AuthorizationNone",
    "Codes",
    "DispatchNotAllowed",
    "ImplementationNotAllowed",
    "MonitorBlockNotOverridable",
    "PlanInputModel",
    "PlanResultModel",
    "Summary",
    "summary_line",
]

KEBAB_CASE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


def _title(name: str, _info: object) -> str:
    return name.replace("_", " ").capitalize()


_WIRE = ConfigDict(
    strict=True,
    extra="forbid",
    frozen=True,
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
    field_title_generator=_title,
    json_schema_serialization_defaults_required=True,
)

Codes = tuple[Annotated[str, StringConstraints(pattern=KEBAB_CASE, max_length=80)], ...]
"""Kebab-case codes: reasons for the decision, or next actions to take."""

Summary = Annotated[
    str,
    StringConstraints(pattern=r"^[^\r\n]+$"),
    Field(description="One line for humans; machines read the typed fields, never this."),
]

DispatchNotAllowed = Annotated[
    Literal[False], Field(description="Always false: a plan never lets a tool call run.")
]
MonitorBlockNotOverridable = Annotated[
    Literal[False], Field(description="Always false: a plan never overrides a monitor's block.")
]
ImplementationNotAllowed = Annotated[
    Literal[False],
    Field(description="Always false: a plan is a report; it never starts an implementation."),
]
AuthorizationNone = Annotated[
    Literal["none"], Field(description='Always "none": a plan authorizes nothing.')
]


class PlanInputModel(BaseModel):
    """Base of the planner inputs: strict, closed, camelCase on the wire, defaults for all."""

    model_config = _WIRE

    @model_validator(mode="before")
    @classmethod
    def _one_spelling_per_field(cls, data: Any) -> Any:
        # validate_by_name accepts both spellings; both at once would be a duplicate key in
        # disguise, and silently preferring one of them is exactly what we refuse.
        if isinstance(data, Mapping):
            for name, info in cls.model_fields.items():
                alias = info.alias
                if alias is not None and alias != name and name in data and alias in data:
                    raise PydanticCustomError(
                        "duplicate_field",
                        "given twice, as '{alias}' and as '{name}'",
                        {"alias": alias, "name": name},
                    )
        return data


class PlanResultModel(BaseModel):
    """Base of the planner results: report-only, immutable, validated on every copy."""

    model_config = _WIRE

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Copy, then validate again so an update cannot smuggle in a forbidden value."""
        copied = super().model_copy(update=update, deep=deep)
        return self.model_validate(copied.model_dump(by_alias=False))


def summary_line(
    plan: str, decision_key: str, decision: str, flags: str, reasons: tuple[str, ...]
) -> str:
    """The one-line summary every plan carries, e.g. ``channel-plan: channel=blocked ...``."""
    return (
        f"{plan}: {decision_key}={decision} dispatch=no override=no implementation=no "
        f"{flags}authorization=none reasons={','.join(reasons)}"
    )
