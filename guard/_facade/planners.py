"""The read-only planners on the facade: a planner run on strictly decoded input, its report
audited (``planner.reported``). Nothing a planner says authorizes anything.

The planners (their models built at import) load with the first plan, not with the guard.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from audit.wire import PlannerReportedData
from guard._facade.core import Core

if TYPE_CHECKING:
    from planning import PlanResult

__all__ = ["Planners"]


class Planners:
    """``plan``: one read-only planner run, audited."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def run(self, planner: str, params: Mapping[str, Any] | str | bytes) -> PlanResult:
        """Run a read-only planner and audit ``planner.reported``. Raises ``PlanInputError``.

        ``params`` is a mapping or JSON text, decoded strictly (:func:`audit.load_json`).
        """
        from guard._facade.plan import plan_input
        from planning import PLANNERS

        inp = plan_input(planner, params)
        result = PLANNERS[planner].run(inp)
        self._core.append(
            PlannerReportedData(
                planner=planner, decision=result.decision, reasons=list(result.reasons)
            )
        )
        return result
