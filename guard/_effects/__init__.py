"""The effects review: what an agent command did to the workspace, judged after it ran.

Every agent command writes the workspace through its own copy-on-write layer (the sandbox
mounts it). ``layer`` reads the layer's effects, ``judge`` says which lose work or touch a
protected path, ``apply`` puts the rest into the workspace through a roll-forward journal,
``review`` ties them together for one layer, ``model`` has the typed shapes.
``baseline`` keeps what the operator had, ``quiet`` says which destructive calls lose
nothing of it and may run unasked.
"""

from __future__ import annotations

from guard._effects.apply import apply_effects, recover
from guard._effects.baseline import Baseline
from guard._effects.judge import judge
from guard._effects.layer import read_effects
from guard._effects.model import Effect, EffectKind, Hold, HoldReason, Review, ReviewDecision
from guard._effects.quiet import QUIET_RULES, UnaskedReason, UnaskedTarget, unasked
from guard._effects.review import LAYER_ID, Reviewer, effects_digest, size_text, summary_line

__all__ = [
    "LAYER_ID",
    "QUIET_RULES",
    "Baseline",
    "Effect",
    "EffectKind",
    "Hold",
    "HoldReason",
    "Review",
    "ReviewDecision",
    "Reviewer",
    "UnaskedReason",
    "UnaskedTarget",
    "apply_effects",
    "effects_digest",
    "judge",
    "read_effects",
    "recover",
    "size_text",
    "summary_line",
    "unasked",
]
