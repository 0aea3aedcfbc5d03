"""What a scoped grant is: the pattern the guard derived, the offer shown, and a coverage result.

Contract: a :class:`GrantPattern` holds facts only (tool, action kind, program, the fixed
arguments, absolute resolved globs, the workspace as scope, the rule ids asked about), never
text the model wrote. In a glob only ``*`` and ``?`` are special and neither matches ``/``;
every other character is literal. A :class:`Coverage` names why a later call is or is not
covered; time, uses and session are the store's business, not this package's.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal, get_args

from pydantic import BaseModel, Field, model_validator

from audit.wire import WIRE_CONFIG, ActionKind

__all__ = [
    "COVERAGE_REASONS",
    "Breadth",
    "Coverage",
    "CoverageReason",
    "GrantOffer",
    "GrantPattern",
    "glob_matches",
    "inside",
]

Breadth = Literal["same-call", "same-directory"]
"""How far an offer reaches: the same call again, or the same action on a glob in one directory."""

CoverageReason = Literal[
    "covered",
    "not-single-action",
    "unresolved-part",
    "other-tool",
    "other-kind",
    "other-program",
    "other-arguments",
    "other-rules",
    "target-outside-glob",
    "target-outside-scope",
    "blocked",
    "not-asked",
]
COVERAGE_REASONS: tuple[CoverageReason, ...] = get_args(CoverageReason)

GLOB_SPECIALS = frozenset("*?[]\\")
"""Characters a path must not hold to be written into a glob (they could not be told apart)."""


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    parts = ["[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in glob]
    return re.compile("".join(parts), re.DOTALL)


def glob_matches(glob: str, path: str) -> bool:
    """Whether absolute ``path`` matches ``glob`` (``*``/``?`` never match ``/``; case counts)."""
    return _glob_regex(glob).fullmatch(path) is not None


def inside(path: str, scope: str) -> bool:
    """Whether absolute ``path`` is ``scope`` or beneath it (lexically; both resolved already)."""
    return path == scope or path.startswith(scope.rstrip("/") + "/")


class GrantPattern(BaseModel):
    """What one grant allows: one plain action, on targets inside ``globs`` and ``scope``."""

    model_config = WIRE_CONFIG

    tool: str = Field(min_length=1)
    kind: ActionKind
    program: str | None = None
    fixed_args: tuple[str, ...] = ()
    globs: tuple[str, ...] = Field(min_length=1)
    scope: str = Field(min_length=1)
    rule_ids: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _absolute_and_inside(self) -> GrantPattern:
        if not self.scope.startswith("/") or self.scope == "/":
            raise ValueError("scope must be an absolute directory other than /")
        for glob in self.globs:
            if not glob.startswith("/") or not inside(glob, self.scope):
                raise ValueError(f"glob {glob!r} is not an absolute path inside the scope")
        if self.rule_ids != tuple(sorted(set(self.rule_ids))):
            raise ValueError("rule ids must be sorted and unique")
        return self


class GrantOffer(BaseModel):
    """One grant the dialog may offer besides "this call once", with the operator's line."""

    model_config = WIRE_CONFIG

    pattern: GrantPattern
    breadth: Breadth
    label: str = Field(min_length=1, max_length=2000)


class Coverage(BaseModel):
    """Whether a call is covered by a pattern, and if not, the first fact that differs."""

    model_config = WIRE_CONFIG

    reason: CoverageReason
    detail: str = ""

    @property
    def covered(self) -> bool:
        return self.reason == "covered"
