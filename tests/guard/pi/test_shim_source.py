"""The pi extension shim's source has no ``any`` (test_install checks its size and imports).

``make lint`` type-checks the shim against both pinned pi versions (``tsc`` strict,
``tools/pi/<version>/tsconfig.json``); strict mode forbids an implicit ``any`` but not a
written one, so this test looks for the word itself in the shim's code (comments and the text of string and template literals do not count).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parents[3] / "guard" / "_pi" / "extension" / "index.ts"
ANY = re.compile(r"\bany\b")


def code_only(source: str) -> str:
    """``source`` with comments and string / template literal text blanked (newlines kept).

    Code inside a template literal's ``${...}`` stays. Regular expression literals are not
    recognized (the shim has none).
    """
    chars = list(source)
    n = len(source)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = " "

    def template_text(i: int) -> tuple[int, bool]:
        """Skip template text from ``i``: (index after it, whether a ``${`` was entered)."""
        start = i
        while i < n:
            if source[i] == "\\":
                i += 2
            elif source[i] == "`":
                blank(start, i)
                return i + 1, False
            elif source.startswith("${", i):
                blank(start, i)
                return i + 2, True
            else:
                i += 1
        blank(start, n)
        return n, False

    depth: list[int] = []  # open braces inside each enclosing ${...}
    i = 0
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "'\"":
            j = i + 1
            while j < n and source[j] not in (c, "\n"):
                j += 2 if source[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        elif c == "`" or (c == "}" and depth and depth[-1] == 0):
            if c == "}":
                depth.pop()
            i, entered = template_text(i + 1)
            if entered:
                depth.append(0)
        else:
            if depth and c == "{":
                depth[-1] += 1
            elif depth and c == "}":
                depth[-1] -= 1
            i += 1
    return "".join(chars)


def any_lines(source: str) -> list[int]:
    """The line numbers where ``any`` appears in code."""
    return [n for n, line in enumerate(code_only(source).splitlines(), 1) if ANY.search(line)]


def test_the_shim_has_no_any() -> None:
    found = []
    for module in sorted(SHIM.parent.glob("*.ts")):  # index.ts and the modules it imports
        source = module.read_text(encoding="utf-8")
        lines = source.splitlines()
        found += [f"{module.name}:{n}: {lines[n - 1].strip()}" for n in any_lines(source)]
    assert not found, "use unknown and narrow it, not any:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "snippet",
    [
        "type Json = Record<string, any>;",
        "let x: any;",
        "const y = x as any;",
        "function f(a: any[]) {}",
        "const s = `text ${(x as any).y} more`;",
        "const s = `a ${`b ${{ k: 1 as any }} c`} d`;",
        'const s = "str"; let z: any = 1; // any',
    ],
)
def test_the_check_finds_any(snippet: str) -> None:
    assert any_lines(snippet) == [1]


@pytest.mark.parametrize(
    "snippet",
    [
        "// any comment",
        "/* any\n any */ let x: unknown;",
        'const s = "any text";',
        "const s = 'it\\'s any';",
        "const s = `any ${name} any`;",
        "const s = `${{ a: 1 }} any`;",
        "const many = anything + company;",
    ],
)
def test_the_check_ignores_comments_strings_and_other_words(snippet: str) -> None:
    assert any_lines(snippet) == []
