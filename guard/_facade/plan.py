"""JSON text or a mapping -> a validated planner input: the strict decoding planning leaves to us.

``planning`` may not import ``audit``, so it takes decoded values; the CLI, the sidecar and
:meth:`guard.Guard.plan` decode text here with the shared strict loader first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from audit import JsonInputError
from audit.wire import load_json
from planning import MAX_INPUT_BYTES, PLANNERS, PlanInput, PlanInputError, parse_plan_input

__all__ = ["plan_input"]


def plan_input(planner: str, raw: Mapping[str, Any] | str | bytes) -> PlanInput:
    """Decode ``raw`` strictly (text of at most :data:`planning.MAX_INPUT_BYTES` UTF-8 bytes)
    and validate it for ``planner``; every fault is a one-line :class:`planning.PlanInputError`.
    """
    data: object = raw
    if isinstance(raw, str | bytes):
        try:
            data = load_json(raw, max_bytes=MAX_INPUT_BYTES)
        except JsonInputError as exc:
            known = planner if isinstance(planner, str) and planner in PLANNERS else None
            raise PlanInputError(known, f"not valid JSON: {exc.problem}", value=exc.value) from None
    return parse_plan_input(planner, data)
