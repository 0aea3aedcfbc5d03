"""The docs hold together: every page opens with a table of contents, no relative link is dead.

A page under docs/ (the generated schemas/ aside) lists, before its first ``##`` heading, a
table of contents: links to every ``##`` heading of the page, each resolving to one. Every
relative link in README.md and the pages names a file that exists and, for a Markdown file, a
heading it has. Anchors follow GitHub's rules: lowercase, punctuation dropped, spaces become
``-``, a repeated heading gets ``-1``, ``-2``… The audience pages stay short enough to read in
one sitting.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if DOCS / "schemas" not in p.parents)
AUDIENCE = (
    "operator.md",
    "policy.md",
    "threat-model.md",
    "auditor.md",
    "monitor.md",
    "contributing.md",
)
# The old reference guide is dissolved into these pages, and the operator's shows every dialog
# as rendered; each is still read in one sitting.
MAX_AUDIENCE_LINES = 850

LINK = re.compile(r"(?<!!)\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)\)")
HEADING = re.compile(r"(#{1,6}) +(.*?) *#*$")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks (a ``#`` in a shell block is not a heading)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", lambda m: m.group(0).replace("](", "] ("), line))
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: link text kept, lowercase, punctuation dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path: Path) -> list[tuple[int, str]]:
    """(level, anchor) of every heading, a repeated anchor numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = []
    for line in prose(path.read_text(encoding="utf-8")):
        match = HEADING.fullmatch(line)
        if match:
            base = anchor(match.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.append((len(match.group(1)), base if n == 0 else f"{base}-{n}"))
    return found


def links(path: Path) -> list[str]:
    return [
        target for line in prose(path.read_text(encoding="utf-8")) for target in LINK.findall(line)
    ]


def dead(path: Path, target: str) -> str | None:
    """Why a relative link of ``path`` goes nowhere, or None when it resolves."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
        return None
    name, _, fragment = target.partition("#")
    file = (path.parent / name).resolve() if name else path
    if not file.exists():
        return f"{target}: no such file"
    if fragment and file.suffix == ".md" and fragment not in {a for _, a in headings(file)}:
        return f"{target}: {file.name} has no heading #{fragment}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_a_page_opens_with_a_table_of_contents(page: Path) -> None:
    lines = prose(page.read_text(encoding="utf-8"))
    first = next(i for i, line in enumerate(lines) if line.startswith("## "))
    items = [line for line in lines[:first] if line.lstrip().startswith("- ")]
    toc = {t[1:] for line in items for t in LINK.findall(line) if t.startswith("#")}
    own = headings(page)
    assert toc, f"{page.name}: no table of contents before its first ## heading"
    unknown = toc - {a for _, a in own}
    assert not unknown, f"{page.name}: the contents name no heading of the page: {unknown}"
    missing = [a for level, a in own if level == 2 and a not in toc]
    assert missing == [], f"{page.name}: the contents leave out {missing}"


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    problems = [why for target in links(page) if (why := dead(page, target))]
    assert problems == []


def test_the_readme_links_every_audience_page() -> None:
    targets = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    assert {f"docs/{name}" for name in AUDIENCE} <= targets


@pytest.mark.parametrize("name", AUDIENCE)
def test_an_audience_page_is_read_in_one_sitting(name: str) -> None:
    lines = (DOCS / name).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_AUDIENCE_LINES, f"{name}: {lines} lines (at most {MAX_AUDIENCE_LINES})"


def test_the_anchor_rules_are_githubs() -> None:
    assert anchor("The envelope (v1)") == "the-envelope-v1"
    assert anchor("`channel` — implementation channel") == "channel--implementation-channel"
    assert anchor("The operator's signature (passkeys)") == "the-operators-signature-passkeys"
    assert anchor("Configuration (`guard.json`)") == "configuration-guardjson"
