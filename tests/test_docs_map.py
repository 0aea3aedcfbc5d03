"""The map holds: every wing has a README that names its files, and ARCHITECTURE.md's flows
point at lines that hold what they name.

A wing is each top package (``audit/``, ``planning/``, ``guard/``) and each package directly
under ``audit/`` or ``guard/``. Its ``README.md`` says its purpose, its face (``**Face.**``)
and what it must never import (``**Never imports.**``), then lists under ``## Files`` one
line per file: ``- `name`: what it is``. A top package lists its own files and its wings
(``- `_evidence/`: …``); a wing lists every file below it, by its path inside the wing. The
test fails on a wing without a README, a file the README leaves out, and a name it lists that
does not exist.

ARCHITECTURE.md's numbered flows cite ``path:line`` (``guard/_sidecar/session/session.py:42``)
followed by the symbol that line holds (`` `evaluate` ``); each must still be true.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("audit", "planning", "guard")
ENTRY = re.compile(r"^- `([^`]+)`")
CITE = re.compile(r"`((?:audit|planning|guard|tools)/[\w/.-]+\.(?:py|ts)):(\d+)`\s*\(?`([^`]+)`")


def wings() -> list[Path]:
    found = [ROOT / top for top in TOPS]
    for top in ("audit", "guard"):
        found += sorted(p for p in (ROOT / top).iterdir() if p.is_dir() and any(p.glob("*.py")))
    return found


def is_top(wing: Path) -> bool:
    return wing.parent == ROOT


def files_of(wing: Path) -> set[str]:
    """What the wing's README must name: its files, and for a top package its wings."""
    names: set[str] = set()
    for path in wing.rglob("*"):
        rel = path.relative_to(wing)
        if "__pycache__" in rel.parts or path.suffix == ".pyc" or rel.as_posix() == "README.md":
            continue
        if is_top(wing) and len(rel.parts) > 1:
            continue
        if path.is_file():
            names.add(rel.as_posix())
        elif is_top(wing) and path in wings():
            names.add(f"{rel.as_posix()}/")
    return names


def listed(readme: Path) -> list[str]:
    text = readme.read_text(encoding="utf-8")
    section = text.split("\n## Files\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for line in section.splitlines() if (m := ENTRY.match(line))]


def name(wing: Path) -> str:
    return wing.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("wing", wings(), ids=name)
def test_a_wing_has_a_readme_with_its_purpose_face_and_floor(wing: Path) -> None:
    readme = wing / "README.md"
    assert readme.is_file(), (
        f"{name(wing)} has no README.md: purpose, **Face.**, **Never imports.** and ## Files "
        "(docs/contributing.md, 'The layout')"
    )
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# "), f"{name(wing)}/README.md: no title"
    for part in ("**Face.**", "**Never imports.**", "\n## Files\n"):
        assert part in text, f"{name(wing)}/README.md says nothing under {part.strip()}"


@pytest.mark.parametrize("wing", wings(), ids=name)
def test_a_wing_readme_names_every_file_and_only_files_that_exist(wing: Path) -> None:
    readme = wing / "README.md"
    if not readme.is_file():
        pytest.fail(f"{name(wing)} has no README.md")
    entries = listed(readme)
    missing = sorted(files_of(wing) - set(entries))
    assert missing == [], f"{name(wing)}/README.md does not name {missing}"
    absent = [e for e in entries if not (wing / e.rstrip("/")).exists()]
    assert absent == [], f"{name(wing)}/README.md names what does not exist: {absent}"
    twice = sorted({e for e in entries if entries.count(e) > 1})
    assert twice == [], f"{name(wing)}/README.md names these twice: {twice}"


def citations() -> list[tuple[str, int, str]]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return [(m.group(1), int(m.group(2)), m.group(3)) for m in CITE.finditer(text)]


def test_the_architecture_cites_lines() -> None:
    assert len(citations()) >= 20, "ARCHITECTURE.md's flows cite fewer than 20 path:line"


@pytest.mark.parametrize("cite", citations(), ids=lambda c: f"{c[0]}:{c[1]}")
def test_each_path_line_holds_the_symbol_it_names(cite: tuple[str, int, str]) -> None:
    path, line, symbol = cite
    file = ROOT / path
    assert file.is_file(), f"{path} does not exist"
    lines = file.read_text(encoding="utf-8").splitlines()
    assert 1 <= line <= len(lines), f"{path} has {len(lines)} lines, not {line}"
    word = re.escape(symbol.split("(")[0].split(".")[-1])
    pattern = re.compile(rf"(?<![\w]){word}(?![\w])")
    if not pattern.search(lines[line - 1]):
        now = [n for n, text in enumerate(lines, 1) if pattern.search(text)][:5]
        pytest.fail(f"ARCHITECTURE.md cites {path}:{line} for `{symbol}`, now on lines {now}")


def test_the_checks_see_a_missing_file_and_a_stale_name(tmp_path: Path) -> None:
    """The README parser reads entries from ## Files only, a file outside it does not count."""
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n- `ghost.py`: outside the list\n\n**Face.** none\n\n**Never imports.** x\n\n"
        "## Files\n\n- `a.py`: a\n- `b/`: b\n\n## Notes\n\n- `c.py`: not a file entry\n"
    )
    assert listed(readme) == ["a.py", "b/"]
