"""Shared pieces of the benchmarks: timing, ratios against a floor, the table and the JSON.

Every figure is a ratio to a floor measured in the same run on the same machine: absolute
times on shared machines drift from minute to minute, ratios of interleaved samples do not.
"""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Direction = Literal["lower", "higher"]


@dataclass(frozen=True)
class Row:
    """One benchmark figure: ours, its floor (same run), the ratio and the goal on the ratio.

    ``direction`` says which way is better: ``lower`` for times (ratio = ours / floor),
    ``higher`` for throughputs (ratio = ours / floor as well, so the goal is a minimum).
    ``goal_abs`` is an absolute limit on ``ours`` (in ``unit``) where the goal is absolute
    (e.g. a p99 under 1 ms).
    """

    section: str
    name: str
    unit: str
    ours: float
    floor: float
    floor_name: str
    direction: Direction
    goal: float | None = None
    note: str = ""
    goal_abs: float | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.floor if self.floor else float("inf")

    @property
    def met(self) -> bool | None:
        lower = self.direction == "lower"
        checks: list[bool] = []
        if self.goal is not None:
            checks.append(self.ratio <= self.goal if lower else self.ratio >= self.goal)
        if self.goal_abs is not None:
            checks.append(self.ours < self.goal_abs if lower else self.ours > self.goal_abs)
        return all(checks) if checks else None

    @property
    def goal_text(self) -> str:
        sign = "<=" if self.direction == "lower" else ">="
        parts = []
        if self.goal is not None:
            parts.append(f"{sign}{self.goal:g}x")
        if self.goal_abs is not None:
            parts.append(
                ("<" if self.direction == "lower" else ">") + f"{self.goal_abs:g}{self.unit}"
            )
        return ",".join(parts) or "-"

    def as_json(self) -> dict[str, Any]:
        """The row as written to ``bench/results.json`` (camelCase, like every wire shape)."""
        return {
            "section": self.section,
            "name": self.name,
            "unit": self.unit,
            "ours": round(self.ours, 6),
            "floor": round(self.floor, 6),
            "floorName": self.floor_name,
            "ratio": round(self.ratio, 3),
            "direction": self.direction,
            "goalRatio": self.goal,
            "goalAbsolute": self.goal_abs,
            "goal": self.goal_text,
            "met": self.met,
            "note": self.note,
        }


def median_ms(samples: Iterable[float]) -> float:
    """Median of seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _fs_type(path: Path) -> str:
    best = ("", "?")
    try:
        with open("/proc/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mount = parts[1]
                target = str(path.resolve())
                if (target == mount or target.startswith(mount.rstrip("/") + "/")) and len(
                    mount
                ) > len(best[0]):
                    best = (mount, parts[2])  # the file system type, not the device
    except OSError:
        return "?"
    return best[1]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine(work_dir: Path) -> dict[str, Any]:
    """What the numbers were measured on (the temp directory's file system matters most)."""
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "system": platform.system(),
        "workDirFs": _fs_type(work_dir),
    }


def render(rows: list[Row]) -> str:
    """The stdout table: one line per figure, ratio and goal side by side."""
    header = (
        f"{'section':<10} {'figure':<44} {'ours':>12} {'floor':>12} {'ratio':>8}  "
        f"{'goal':<9} {'met':<4} floor"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        goal = row.goal_text
        met = {True: "yes", False: "NO", None: "-"}[row.met]
        lines.append(
            f"{row.section:<10} {row.name:<44} {_fmt(row.ours, row.unit):>12} "
            f"{_fmt(row.floor, row.unit):>12} {row.ratio:>7.2f}x  {goal:<9} {met:<4} "
            f"{row.floor_name}"
        )
        if row.note:
            lines.append(f"{'':<10}   {row.note}")
    return "\n".join(lines)


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.3f} ms"
    if unit == "rec/s":
        return f"{value:,.0f}/s"
    if unit == "ops/s":
        return f"{value:,.0f}/s"
    if unit == "s":
        return f"{value:.2f} s"
    return f"{value:.3f} {unit}"
