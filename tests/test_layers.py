"""The layering rule: audit/ and planning/ import nothing of ours; no import cycles.

Type-only imports count: a cycle hidden behind ``TYPE_CHECKING`` is still a cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("audit", "planning", "guard")


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, type-only imports (``if TYPE_CHECKING:``) included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for package in OURS for p in (ROOT / package).rglob("*.py")}


@pytest.mark.parametrize("package", ["audit", "planning"])
def test_lower_layers_import_nothing_of_ours(package: str) -> None:
    for name, path in MODULES.items():
        if name.split(".")[0] != package:
            continue
        foreign = {m for m in imports_of(path) if m.split(".")[0] in set(OURS) - {package}}
        assert not foreign, f"{name} imports {sorted(foreign)}"


def test_no_import_cycles_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        deps = set()
        for imported in imports_of(path):
            # "from guard._x import y" depends on guard._x (or the package when y is a module)
            while imported and imported not in MODULES:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                deps.add(imported)
        graph[name] = deps
    # Packages' __init__ re-export their children; edges into a package from its own
    # children would be cycles, which the startswith() filter above already excludes.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                cycle = [*stack[stack.index(dep) :], dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


PRIVATE = re.compile(r"^\s*(?:from|import)\s+(audit|planning)\._", re.MULTILINE)


@pytest.mark.parametrize("package", ["guard", "tools", "bench", "examples"])
def test_no_private_module_of_audit_or_planning_is_imported_outside_it(package: str) -> None:
    """``guard`` and the repo's tooling use ``audit``'s and ``planning``'s public faces only
    (``audit``, ``audit.lines``, ``planning``); their underscore modules are theirs."""
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for match in PRIVATE.finditer(path.read_text())
    ]
    assert offenders == []
