"""The layering rule: audit/ and planning/ import nothing of ours; no import cycles; inside
guard/, a wing takes another wing's names from its face (``__init__.py``), never from its
modules, but for the few imports ``REACHING`` lists with their reasons.

Type-only imports count: a cycle hidden behind ``TYPE_CHECKING`` is still a cycle.
"""

from __future__ import annotations

import ast
import importlib
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
    (``audit``, ``audit.log``, ``audit.verify``, ``audit.wire``, ``audit.lines``, ``audit.tlog``,
    ``planning``); their underscore modules are theirs."""
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for match in PRIVATE.finditer(path.read_text())
    ]
    assert offenders == []


# --- guard's wings and their faces -------------------------------------------------------

GUARD = ROOT / "guard"
WINGS = {p.name for p in GUARD.iterdir() if p.name[0] != "." and (p / "__init__.py").is_file()}
"""Each package directly under ``guard/`` is a wing; its ``__init__.py`` is its face."""

PUBLIC_FACES = {"evidence": "_evidence"}
"""``guard.evidence`` is the evidence wing's public face: it names that wing's modules itself."""

REACHING: dict[tuple[str, str], str] = {
    ("guard/__init__.py", "guard._pi.install"): (
        "the function install shares its module's name, which a lazy face cannot export"
    ),
    ("guard/_cli/setup/pi.py", "guard._pi.install"): (
        "the function install shares its module's name, which a lazy face cannot export"
    ),
    ("guard/_cli/setup/doctor.py", "guard._sandbox.doctor"): (
        "the sandbox face is eager (its plan and probe share their modules' names); only "
        "pi-guard doctor needs the sandbox's check"
    ),
    ("guard/_sidecar/network.py", "guard._sandbox.proxy"): (
        "the sandbox face is eager; the network proxy runs on asyncio, which only the sidecar needs"
    ),
}
"""What still reaches past a wing's face, each with its reason. The list only shrinks: an
entry no longer needed fails too, so it is deleted in the change that made it unneeded."""


def _wing(module: str) -> str | None:
    """The wing ``module`` belongs to (``guard._policy.bash.walker`` -> ``_policy``)."""
    parts = module.split(".")
    if parts[0] != "guard" or len(parts) < 2 or parts[1] not in WINGS:
        return None
    return PUBLIC_FACES.get(parts[1], parts[1])


def _submodules(wing: str) -> set[str]:
    here = GUARD / wing
    return {p.stem for p in here.glob("*.py")} | {p.parent.name for p in here.glob("*/__init__.py")}


def reaching_imports() -> set[tuple[str, str]]:
    """``(file, module)`` for each import in ``guard/`` of another wing's module other than its
    face: ``from guard._evidence.keys import Signer`` outside ``guard/_evidence/``, and
    ``from guard._pi import install`` too when ``install`` names the module ``install.py``
    rather than a name of the face. Type-only imports count."""
    found: set[tuple[str, str]] = set()
    for name, path in MODULES.items():
        if name.split(".")[0] != "guard":
            continue
        mine = _wing(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
                wing = _wing(node.module)
                if wing is not None and node.module == f"guard.{wing}":
                    face = importlib.import_module(node.module)
                    targets += [
                        f"{node.module}.{alias.name}"
                        for alias in node.names
                        if alias.name in _submodules(wing) and alias.name not in face.__all__
                    ]
            else:
                continue
            for target in targets:
                wing = _wing(target)
                if wing is not None and wing != mine and target != f"guard.{wing}":
                    found.add((path.relative_to(ROOT).as_posix(), target))
    return found


def test_no_import_reaches_past_another_wings_face() -> None:
    """A wing takes another wing's names from its ``__init__.py``, never from its modules."""
    unlisted = sorted(reaching_imports() - set(REACHING))
    assert unlisted == [], (
        "import these names from the wing's face (its __init__.py, pinned in "
        "tests/test_exported_members.py's WING_FACES), not from its modules"
    )


def test_the_allow_list_of_reaching_imports_only_shrinks() -> None:
    gone = sorted(set(REACHING) - reaching_imports())
    assert gone == [], "these imports no longer reach past a face: delete their entries"
    assert all(reason.strip() for reason in REACHING.values())


def test_the_reach_check_sees_a_module_and_a_submodule_named_through_the_face() -> None:
    seen = reaching_imports()
    assert ("guard/_cli/setup/pi.py", "guard._pi.install") in seen
    # an import inside its own wing and the public face's names are not reaches
    assert not any(file.startswith("guard/_evidence/") for file, _ in seen)
    assert not any(file.startswith("guard/evidence/") for file, _ in seen)
