"""The shim's run-time shapes of the sidecar's replies, generated from the pydantic models.

The shim (``guard/_pi/extension/``) checks every reply it reads against a shape
(``{ field: "string" | "boolean" | "number" | "object" | "list", "?" when it may be null }``)
of the fields it reads. Those shapes are written here from the models in
``guard/_sidecar/wire.py`` (and the few they reuse), between two marker lines of its
``wire.ts``, so a field the shim reads that Python renames, retypes or drops fails
``tests/tools/test_wire_shapes.py``.

``python -m tools.pi.wire_shapes`` rewrites the block; ``--check`` only says whether it
drifted (exit 1).
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from guard._approvals.model import Answer
from guard._facade.spool import ReplayReply
from guard._sidecar.wire import (
    ApprovalRef,
    Dialog,
    DialogChoices,
    EffectsDialog,
    EffectsResolveReply,
    EffectsReviewReply,
    EvaluateReply,
    GrantNote,
    HealthReply,
    JudgedFile,
    PlannerTool,
    RecordReply,
    SandboxPlanReply,
)

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "guard" / "_pi" / "extension" / "wire.ts"
BEGIN = (
    "// <wire shapes: the sidecar's replies, checked at run time;"
    " generated from guard/_sidecar/wire.py by `python -m tools.pi.wire_shapes`>"
)
END = "// </wire shapes>"

# The shim's constant for each reply (or part of one) it reads: the model, and the fields the
# shim reads, in the shim's order. Their kinds come from the model, and a field the model does
# not have is an error: the shim checks what it uses, and what it uses is what Python sends.
SHAPES: Mapping[str, tuple[type[BaseModel], tuple[str, ...]]] = {
    "TOOL": (PlannerTool, ("name", "label", "description", "planner", "parameters")),
    "EVALUATE": (
        EvaluateReply,
        (
            *("action", "dialog", "blockReason", "sandbox", "file", "record", "covered"),
            *("approval", "waitNotice"),
        ),
    ),
    "APPROVAL": (ApprovalRef, ("id", "digest")),
    "ANSWER": (Answer, ("decision", "approver", "reason", "grant")),
    "JUDGED": (JudgedFile, ("path", "real")),
    "DIALOG": (
        Dialog,
        ("title", "message", "details", "choices", "reasonTitle", "reasonPlaceholder"),
    ),
    "CHOICES": (DialogChoices, ("no", "noWithReason", "stop", "yes", "grants", "details")),
    "GRANT": (GrantNote, ("grantId", "label")),
    "HEALTH": (HealthReply, ("ok", "statusText")),
    "RECORD": (RecordReply, ("decision", "evidenceId", "envelope", "summary", "grant")),
    "REPLAY": (ReplayReply, ("delivered", "duplicates", "skipped", "rejected")),
    "SANDBOX": (
        SandboxPlanReply,
        ("state", "prefix", "unsetEnv", "notice", "noticeLevel", "blockReason", "effects"),
    ),
    "EFFECTS_REVIEW": (
        EffectsReviewReply,
        ("decision", "summary", "note", "dialog", "hint", "approval"),
    ),
    "EFFECTS_DIALOG": (EffectsDialog, ("title", "message", "discard", "apply", "preselect")),
    "EFFECTS_RESOLVE": (EffectsResolveReply, ("decision", "note")),
}


class ShapeError(Exception):
    """A model field the shim's shapes cannot say (a union of different kinds)."""


def _kind(annotation: Any) -> str:
    """The shim's kind of ``annotation``'s value as ``model_dump(mode="json")`` writes it."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kind(get_args(annotation)[0])
    if origin is Literal:
        kinds = {_kind(type(a)) for a in get_args(annotation) if a is not None}
        if len(kinds) == 1:
            return kinds.pop()
        raise ShapeError(f"a literal of different kinds: {annotation!r}")
    if origin in (Union, types.UnionType):
        kinds = {_kind(a) for a in get_args(annotation)}
        if len(kinds) == 1:
            return kinds.pop()
        raise ShapeError(f"a union of different kinds: {annotation!r}")
    base = origin or annotation
    if not isinstance(base, type):
        raise ShapeError(f"a type the shapes cannot say: {annotation!r}")
    if issubclass(base, bool):
        return "boolean"
    if issubclass(base, (str, PurePath, enum.Enum)):
        return "string"
    if issubclass(base, (int, float)):
        return "number"
    if issubclass(base, (BaseModel, Mapping)):
        return "object"
    if issubclass(base, (Sequence, set, frozenset)):
        return "list"
    raise ShapeError(f"a type the shapes cannot say: {annotation!r}")


def _nullable(annotation: Any) -> tuple[Any, bool]:
    """``annotation`` without ``None``, and whether it allowed ``None``."""
    if get_origin(annotation) is Annotated:
        return _nullable(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) < len(args):
            return (rest[0] if len(rest) == 1 else Union[rest]), True  # noqa: UP007
    return annotation, False


def shape(model: type[BaseModel]) -> dict[str, str]:
    """``{wire name: kind}`` for every field of ``model``, in the model's order."""
    out: dict[str, str] = {}
    hints = typing.get_type_hints(model, include_extras=True)
    for name, field in model.model_fields.items():
        annotation, nullable = _nullable(hints.get(name, field.annotation))
        alias = field.serialization_alias or field.alias or name
        out[alias] = _kind(annotation) + ("?" if nullable else "")
    return out


def render() -> str:
    """The generated block, marker lines included."""
    lines = [BEGIN]
    for const, (model, reads) in SHAPES.items():
        kinds = shape(model)
        missing = [key for key in reads if key not in kinds]
        if missing:
            raise ShapeError(f"{const}: {model.__name__} has no field {', '.join(missing)}")
        body = ", ".join(f'{key}: "{kinds[key]}"' for key in reads)
        lines.append(f"export const {const} = {{ {body} }} as const;")
    lines.append(END)
    return "\n".join(lines)


def splice(source: str, block: str) -> str:
    """``source`` with its generated block replaced by ``block``."""
    start, end = source.find(BEGIN), source.find(END)
    if start < 0 or end < start:
        raise ShapeError(f"{SHIM.name} has no generated block ({BEGIN!r} ... {END!r})")
    return source[:start] + block + source[end + len(END) :]


def main(argv: Sequence[str]) -> int:
    source = SHIM.read_text()
    try:
        updated = splice(source, render())
    except ShapeError as err:
        print(f"wire_shapes: {err}", file=sys.stderr)
        return 2
    if updated == source:
        return 0
    if "--check" in argv:
        print(f"wire_shapes: {SHIM.relative_to(REPO)} drifted from the models", file=sys.stderr)
        return 1
    SHIM.write_text(updated)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
