"""The policy's floors import one way: the top (``engine``, ``layering``, ``cache``) on
``matching/``, ``matching/`` on ``settings/`` and ``bash/``; ``settings/`` and ``bash/`` on
nothing else of the policy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

POLICY = Path(__file__).resolve().parents[3] / "guard" / "_policy"

# A floor may import these other parts of the policy, nothing more.
ALLOWED = {
    "settings": set(),
    "bash": set(),
    "matching": {"settings", "bash"},
}


def _policy_imports(path: Path) -> set[str]:
    """The parts of ``guard._policy`` that ``path`` imports (``settings``, ``engine`` …)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["guard", "_policy"]:
                found.add(parts[2] if len(parts) > 2 else "")
    return found


@pytest.mark.parametrize("floor", sorted(ALLOWED))
def test_a_floor_imports_only_the_floors_below_it(floor: str) -> None:
    offenders = {
        str(path.relative_to(POLICY)): sorted(parts - ALLOWED[floor] - {floor})
        for path in sorted((POLICY / floor).glob("*.py"))
        if (parts := _policy_imports(path)) - ALLOWED[floor] - {floor}
    }
    assert offenders == {}


def test_the_top_floor_is_small() -> None:
    top = sorted(p.stem for p in POLICY.glob("*.py") if p.stem != "__init__")
    assert top == ["cache", "engine", "layering"]
