"""What the session remembers of each call between its requests, by tool call id: the grants
its dialog offered (a grant chosen with the yes is kept only if it is still the one shown),
what it was said yes to and whether the operator said it in a dialog (the effects review
holds what the command does beyond it), and why it ran unasked (its ``tool.executed`` says
so). Each entry is taken by the request that needs it last: ``record``, ``effects.review``
or ``audit.toolExecuted``.
"""

from __future__ import annotations

import os

from guard._effects import UnaskedTarget
from guard._facade import ClassifiedCall
from guard._grants import GrantOffer

__all__ = ["Memo"]


class Memo:
    """Per call (see the module); the verbs of a call's life write it, the effects review
    and the call's end read it."""

    def __init__(self) -> None:
        # The grants each asked call's dialog offered: a grant chosen is derived again and
        # kept only if it is still the one shown.
        self.offered: dict[str, tuple[GrantOffer, ...]] = {}
        # What each call was said yes to, resolved when the operator (or a grant, or an
        # allow rule) said it; the effects review holds what it does beyond.
        self.approved: dict[str, tuple[str, ...]] = {}
        # The calls the operator said yes to in a dialog: the history their command rewrites
        # in .git is what they said yes to (a grant or an allow rule never covers it).
        self.answered: set[str] = set()
        # Why each call that ran without a dialog could: its targets, restorable against the
        # operator's baseline.
        self.unasked: dict[str, tuple[UnaskedTarget, ...]] = {}

    def approve(self, tool_call_id: str, call: ClassifiedCall) -> None:
        """What the operator (or a grant) said yes to, as this request judged it, resolved
        now: the effects review holds what the command does beyond it (a link swapped in by
        a parallel call, say)."""
        self.approved[tool_call_id] = tuple(os.path.realpath(t) for t in call.verdict.targets)

    def approve_targets(self, tool_call_id: str, targets: tuple[str, ...]) -> None:
        """What an allow rule of the user's let through unasked, resolved now: what it names
        is approved, so the effects review does not hold it again."""
        self.approved[tool_call_id] = tuple(os.path.realpath(t) for t in targets)
