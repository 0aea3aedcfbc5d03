"""The policy's floors import one way: the top (``engine``, ``layering``, ``cache``) on
``matching/``, ``matching/`` on ``settings/`` and ``bash/``; ``settings/`` and ``bash/`` on
nothing else of the policy. Inside ``bash/`` the same: ``walker`` on top, ``running/`` on
``programs/`` (the cards) and ``parsing/``, ``programs/`` on ``parsing/`` and ``operands/``,
each of them on ``model``, and ``model`` on nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

POLICY = Path(__file__).resolve().parents[3] / "guard" / "_policy"

BASH = POLICY / "bash"

# A floor may import these other parts of the policy, nothing more.
ALLOWED = {
    "settings": set(),
    "bash": set(),
    "matching": {"settings", "bash"},
}

# A part of ``bash/`` may import these other parts of it, nothing more (``walker`` anything).
BASH_ALLOWED = {
    "model": set(),
    "parsing": {"model"},
    "operands": {"model"},
    "programs": {"model", "parsing", "operands"},
    "running": {"model", "parsing", "programs"},
}


def _imports_under(path: Path, package: list[str]) -> set[str]:
    """The parts of ``package`` (one name below it) that ``path`` imports."""
    depth = len(package)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:depth] == package:
                found.add(parts[depth] if len(parts) > depth else "")
    return found


def _policy_imports(path: Path) -> set[str]:
    """The parts of ``guard._policy`` that ``path`` imports (``settings``, ``engine`` …)."""
    return _imports_under(path, ["guard", "_policy"])


@pytest.mark.parametrize("floor", sorted(ALLOWED))
def test_a_floor_imports_only_the_floors_below_it(floor: str) -> None:
    offenders = {
        str(path.relative_to(POLICY)): sorted(parts - ALLOWED[floor] - {floor})
        for path in sorted((POLICY / floor).rglob("*.py"))
        if (parts := _policy_imports(path)) - ALLOWED[floor] - {floor}
    }
    assert offenders == {}


@pytest.mark.parametrize("part", sorted(BASH_ALLOWED))
def test_a_part_of_the_bash_analysis_imports_only_the_parts_below_it(part: str) -> None:
    package = BASH / part
    paths = sorted(package.rglob("*.py")) if package.is_dir() else [BASH / f"{part}.py"]
    offenders = {
        str(path.relative_to(BASH)): sorted(parts - BASH_ALLOWED[part] - {part})
        for path in paths
        if (parts := _imports_under(path, ["guard", "_policy", "bash"]))
        - BASH_ALLOWED[part]
        - {part}
    }
    assert offenders == {}


def test_every_part_of_the_bash_analysis_has_a_floor() -> None:
    parts = {p.stem for p in BASH.glob("*.py")} | {
        p.parent.name for p in BASH.glob("*/__init__.py")
    }
    assert parts - {"__init__"} == {*BASH_ALLOWED, "walker"}


def test_the_top_floor_is_small() -> None:
    top = sorted(p.stem for p in POLICY.glob("*.py") if p.stem != "__init__")
    assert top == ["cache", "engine", "layering"]
