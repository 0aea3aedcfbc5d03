"""ARCHITECTURE.md names every module of the three packages and of the verifier.

A module is named when its section of the document (``## audit/``, ``## planning/``,
``## guard/``, ``## verifier/``) spells it: a top-level module by its file name
(```_log.py```), a module of a sub-package by its stem in the row of that sub-package
(```ledger``` in the ```_evidence/``` row), a module two levels down by its stem in the row of
the outer one (``bash/``'s ```syntax``` in the ```_policy/``` row). A new module that the
document does not name fails here, so the map stays a map of the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "ARCHITECTURE.md").read_text()


def _section(name: str) -> str:
    parts = re.split(r"^## ", DOC, flags=re.MULTILINE)
    found = [p for p in parts if p.startswith(f"{name}/")]
    assert found, f"ARCHITECTURE.md has no section ## {name}/"
    return found[0]


def _row(section: str, first_cell: str) -> str:
    rows = [ln for ln in section.splitlines() if ln.startswith(f"| `{first_cell}`")]
    return "\n".join(rows)


def _modules(package: str) -> list[Path]:
    base = ROOT / package
    return sorted(
        p.relative_to(base)
        for p in base.rglob("*.py")
        if "__pycache__" not in p.parts and p.name != "__init__.py"
    )


@pytest.mark.parametrize("package", ["audit", "planning", "guard"])
def test_every_module_is_named(package: str) -> None:
    section = _section(package)
    missing = []
    for module in _modules(package):
        if len(module.parts) == 1:
            named = f"`{module.name}`" in section
        else:
            row = _row(section, f"{module.parts[0]}/")
            named = f"`{module.stem}`" in row or f"{module.stem}`" in row
        if not named:
            missing.append(str(module))
    assert missing == [], f"ARCHITECTURE.md does not name these {package} modules: {missing}"


def test_every_verifier_source_is_named() -> None:
    section = _section("verifier")
    sources = sorted(p.name for p in (ROOT / "verifier" / "src").glob("*.ts"))
    assert [s for s in sources if f"`{s}`" not in section and f"src/{s}" not in section] == []


def test_the_repo_only_folders_are_named() -> None:
    for folder in ("tools/", "bench/", "verifier/", "tests/"):
        assert f"`{folder}`" in DOC or f"{folder}  " in DOC or f"\n{folder}" in DOC, folder
