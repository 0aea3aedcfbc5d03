"""Render ``bench/results.json`` as the Markdown tables of ``docs/performance.md``.

python bench/report.py [bench/results.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _value(value: float, unit: str) -> str:
    if unit in ("rec/s", "ops/s"):
        return f"{value:,.0f}/s"
    if unit == "us":
        return f"{value:.1f} µs"
    return f"{value:.3f} {unit}"


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    out = [
        f"Measured {results['generatedAt']} on {machine['cpu']} x{machine['cpus']}, "
        f"Python {machine['python']}, Linux {machine['kernel']}, temp dir on "
        f"{machine['workDirFs']}.",
        "",
    ]
    section = None
    for row in results["rows"]:
        if row["section"] != section:
            section = row["section"]
            out += [
                "",
                f"**{section}**",
                "",
                "| figure | ours | floor | ratio | goal | met |",
                "|---|---:|---:|---:|---|---|",
            ]
        met = {True: "yes", False: "**no**", None: "–"}[row["met"]]
        out.append(
            f"| {row['name']} | {_value(row['ours'], row['unit'])} | "
            f"{_value(row['floor'], row['unit'])} ({row['floorName']}) | "
            f"{row['ratio']:.2f}x | {row['goal']} | {met} |"
        )
    return "\n".join(out) + "\n"


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results.json"
    sys.stdout.write(render(json.loads(path.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
