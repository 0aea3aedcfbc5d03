"""ARCHITECTURE.md is a map of the tree: it names every wing, every root module and every
verifier source, and no table cell of it is a wall of text.

The wings' files are named one line each in the wings' own READMEs
(``tests/test_docs_map.py``); this page names the wings (```_evidence/```), the modules at the
root of each package (```_consumer.py```) and the verifier's sources. A new wing or root
module that the page does not name fails here, so the map stays a map of the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "ARCHITECTURE.md").read_text()
MAX_CELL = 400


def _section(name: str) -> str:
    parts = re.split(r"^## ", DOC, flags=re.MULTILINE)
    found = [p for p in parts if p.startswith(f"{name}/")]
    assert found, f"ARCHITECTURE.md has no section ## {name}/"
    return found[0]


@pytest.mark.parametrize("package", ["audit", "planning", "guard"])
def test_every_wing_and_root_module_is_named(package: str) -> None:
    base = ROOT / package
    wings = [p.name + "/" for p in base.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    modules = [p.name for p in base.glob("*.py") if p.name != "__init__.py"]
    missing = [
        n for n in sorted(wings + modules) if f"`{n}`" not in DOC and f"`{package}/{n}`" not in DOC
    ]
    assert missing == [], f"ARCHITECTURE.md does not name these of {package}/: {missing}"


def test_no_table_cell_is_a_wall_of_text() -> None:
    cells = [
        c.strip() for line in DOC.splitlines() if line.startswith("|") for c in line.split("|")
    ]
    long = [c[:60] + "…" for c in cells if len(c) > MAX_CELL]
    assert long == [], f"cells over {MAX_CELL} characters: {long}"


def test_every_verifier_source_is_named() -> None:
    section = _section("verifier")
    sources = sorted(p.name for p in (ROOT / "verifier" / "src").glob("*.ts"))
    assert [s for s in sources if f"`{s}`" not in section and f"src/{s}" not in section] == []


def test_the_repo_only_folders_are_named() -> None:
    for folder in ("tools/", "bench/", "verifier/", "tests/"):
        assert f"`{folder}`" in DOC or f"{folder}  " in DOC or f"\n{folder}" in DOC, folder
