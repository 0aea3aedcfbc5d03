"""``audit``'s floors: each sub-package imports only the floors below it (ARCHITECTURE.md).

``tests/test_layers.py`` forbids cycles between modules; this keeps the direction of the
sub-packages themselves, so no import runs back up a floor even without a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

AUDIT = Path(__file__).resolve().parents[2] / "audit"

# What each place of audit/ may import of audit (besides itself and ``_errors``).
MAY_IMPORT: dict[str, set[str]] = {
    "_records": set(),
    "_redaction": set(),
    "tlog": {"_records", "_lazy"},
    "_checking": {"_records", "tlog"},
    "_writing": {"_records", "tlog", "_checking", "_redaction"},
    "_reporting": {"_records"},
    "lines": {"_records"},
    # The faces by audience re-export their floors' names (lazily, through ``_lazy``).
    "log": {"_lazy", "_writing", "_redaction"},
    "verify": {"_lazy", "_checking", "_records", "_reporting"},
    "wire": {"_lazy", "_records"},
    "_errors": set(),
    "_lazy": set(),
}


def _place(path: Path) -> str:
    rel = path.relative_to(AUDIT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_each_floor_imports_only_the_floors_below_it() -> None:
    wrong = []
    for path in sorted(AUDIT.rglob("*.py")):
        place = _place(path)
        if place == "__init__":
            continue  # the face re-exports every floor
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                parts = node.module.split(".")
                if parts[0] != "audit":
                    continue
                target = parts[1] if len(parts) > 1 else "audit"
                if target not in {place, "_errors"} and target not in MAY_IMPORT[place]:
                    wrong.append(f"{path.relative_to(AUDIT)} imports {node.module}")
    assert wrong == []


def test_every_place_has_a_floor() -> None:
    places = {_place(p) for p in AUDIT.rglob("*.py")} - {"__init__"}
    assert places == set(MAY_IMPORT)
