"""The typed shapes of the effects review: what a command did to the workspace, and what of
it is held for the operator.

A command runs on a copy-on-write layer of the workspace (:mod:`guard._effects.layer`);
when it ends, its upper layer says what changed. :class:`Effect` is one change, relative to
the workspace as it was below the layer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG

__all__ = [
    "REGENERABLE",
    "Effect",
    "EffectKind",
    "Hold",
    "HoldReason",
    "Review",
    "ReviewDecision",
]

REGENERABLE = frozenset(
    {
        "__pycache__", ".venv", "venv", ".tox", ".nox", ".pytest_cache", ".mypy_cache",
        ".ruff_cache", "node_modules", ".next", ".turbo", ".parcel-cache", ".gradle",
    }
)  # fmt: skip
"""Directories any tool makes again from the project (caches, installed dependencies):
what is in them is not work, in a repository or not."""

EffectKind = Literal[
    "created",  # a file, link or directory that was not there
    "modified",  # a file's content changed
    "deleted",  # a file, link or empty directory removed
    "replaced",  # something of another type took its place (a file became a link …)
    "mode-changed",  # only its permission bits changed
]

HoldReason = Literal[
    "untracked",  # deleted or overwritten, not tracked by git and not ignored: gone for good
    "uncommitted",  # deleted or overwritten, tracked but with changes git does not have
    "not-in-git",  # deleted or overwritten where no git repository can bring it back
    "repository",  # the repository itself (.git, its objects or refs) deleted
    "beyond-approval",  # after a yes: lost or overwritten beyond the targets the dialog named
    "conflict",  # the workspace changed under the command (a link above the path, a target
    # changed since the layer was made): never applied
    "protected",  # any change to a protected path (.env*, .pi/, the user's protected globs)
    "unexamined",  # too many files to look at each: the review never judges a sample
    "mode",  # setuid/setgid or world-write added, or the owner's access taken away
]

ReviewDecision = Literal["empty", "applied", "held", "discarded", "partial"]


class Effect(BaseModel):
    """One change a command made, as a path relative to the workspace root.

    ``size`` is the new size (files), ``before`` the size it had (``None``: it did not exist
    or was not a file); ``kind_of`` is what the path now is (``file``, ``dir``, ``link``,
    ``none`` when deleted) and ``was`` what it was; ``target`` is a new link's target;
    ``files`` counts what a created or deleted directory holds (it is one effect);
    ``conflict``: a new directory that holds whiteouts, which only a workspace that changed
    under the command can leave (it is never applied).
    """

    model_config = WIRE_CONFIG

    kind: EffectKind
    path: str = Field(min_length=1)
    kind_of: Literal["file", "dir", "link", "none"]
    was: Literal["file", "dir", "link", "none"]
    size: int | None = None
    before: int | None = None
    files: int | None = None
    mode: int | None = None
    target: str | None = None
    conflict: bool = False


class Hold(BaseModel):
    """An effect that loses work (or touches a protected path): the operator decides."""

    model_config = WIRE_CONFIG

    effect: Effect
    reason: HoldReason
    files: int = 1  # a deleted directory: how many files it held
    bytes: int = 0


class Review(BaseModel):
    """What the guard made of one command's layer."""

    model_config = WIRE_CONFIG

    decision: ReviewDecision
    effects: tuple[Effect, ...] = ()
    held: tuple[Hold, ...] = ()
    digest: str | None = None
    summary: str = ""
    skipped: tuple[Hold, ...] = ()
    """Held changes an apply left as they were: a conflict, or changed since the command ran."""
