"""The planning package's exception tree: one base, a leaf that carries the bad value.

::

    PlanningError
    └── PlanInputError     planner input we refuse (``planner``, ``field``, ``problem``, ``value``)

Planning imports nothing of ours, so the one-line rendering of a bad value is its own.
"""

from __future__ import annotations

__all__ = ["PlanInputError", "PlanningError", "safe_repr"]


def safe_repr(value: object) -> str:
    """``repr(value)``, or a placeholder where ``repr`` fails (an integer past 4300 digits)."""
    try:
        return repr(value)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__} too large to show>"


def _short(value: object, limit: int = 120) -> str:
    # Planning may not import audit.shorten (layering); this is its own one-line cut.
    text = value if isinstance(value, str) else safe_repr(value)
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PlanningError(Exception):
    """Base of every error the planning package raises on purpose."""


class PlanInputError(PlanningError):
    """Planner input we refuse; ``str(err)`` is always a single line.

    ``planner`` names the planner (``None`` when the name itself is unknown), ``field`` the
    offending wire field when there is one, ``problem`` says what is wrong and ``value`` is a
    short rendering of the bad value (``None`` when there is nothing useful to show).
    """

    def __init__(
        self,
        planner: str | None,
        problem: str,
        *,
        field: str | None = None,
        value: object = None,
    ) -> None:
        self.planner = None if planner is None else _short(planner, 60)
        self.field = None if field is None else _short(field, 60)
        self.problem = _short(problem, 400)
        self.value = None if value is None else _short(value)
        where = "plan input" if self.planner is None else f"{self.planner} plan input"
        if self.field is not None:
            where += f": field {self.field!r}"
        shown = f" (got {self.value})" if self.value is not None else ""
        super().__init__(f"{where}: {self.problem}{shown}")
