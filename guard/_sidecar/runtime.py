"""What the pi runtime knows, filled into a planner's input for the planner tool.

The planners are pure and assume nothing (every capability defaults to ``false``). Inside pi
the guard knows some of those capabilities for certain: with a UI it owns the confirmation
dialog, and ``pi.appendEntry`` stores structured session entries. When the model calls the
planner tool, the shim sends these facts (:class:`~guard._sidecar.wire.RuntimeFacts`) and
:func:`fill_runtime_facts` sets the input fields they decide, except a field the caller set
explicitly (in either spelling): the caller's word wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from guard._sidecar.wire import RuntimeFacts

__all__ = ["RUNTIME_FIELDS", "fill_runtime_facts"]

RUNTIME_FIELDS: Mapping[str, Mapping[str, str]] = {
    "channel": {"guard_can_own_dialog": "has_ui"},
    "signal-source": {
        "guard_owns_confirmation_dialog": "has_ui",
        "audit_entry_append_available": "append_entry",
    },
    "runtime-consumption": {"guard_owns_confirmation_dialog": "has_ui"},
}
"""Per planner: input field (snake_case) -> the :class:`RuntimeFacts` attribute that decides it."""


def fill_runtime_facts(
    planner: str, params: Mapping[str, Any], facts: RuntimeFacts
) -> tuple[dict[str, Any], dict[str, bool]]:
    """``params`` with the runtime's facts filled in, and which fields were filled (camelCase)."""
    filled: dict[str, bool] = {}
    for field, fact in RUNTIME_FIELDS.get(planner, {}).items():
        alias = to_camel(field)
        if field in params or alias in params:
            continue
        filled[alias] = bool(getattr(facts, fact))
    return {**params, **filled}, filled
