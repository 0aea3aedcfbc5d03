"""Plain-text tables for people. Cells are made terminal-safe: no control characters."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CLIP", "render_table", "safe_cell", "short_hash"]

# C0/C1 controls, DEL, bidi overrides and isolates, zero-width and line/paragraph separators.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def safe_cell(text: object) -> str:
    """``text`` with every control or bidi character shown as ``\\uXXXX``."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def short_hash(value: str) -> str:
    """``sha256:0123456789ab…`` for display; the full value stays in the JSON output."""
    for prefix in ("sha256:", "ed25519:"):
        if value.startswith(prefix) and len(value) > len(prefix) + 12:
            return value[: len(prefix) + 12] + "…"
    return value


# The widest a cell of these columns is shown (a longer one keeps its head, then "…"): one
# long tool name (the planner's is 51 characters) must not widen every row.
CLIP = {"TOOL": 20, "CALL": 18, "WHAT": 60}


def _clip(text: str, width: int | None) -> str:
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, width: int | None = None
) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded; cells
    of :data:`CLIP` columns are cut to their width. With ``width``, the last column is cut
    so that no line is longer (it keeps at least 12 characters)."""
    limits = [CLIP.get(h) for h in headers]
    cells = [
        [safe_cell(c) for c in headers],
        *[[_clip(safe_cell(c), limits[i]) for i, c in enumerate(row)] for row in rows],
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    if width is not None:
        room = max(12, width - sum(w + 2 for w in widths[:-1]))
        cells = [[*row[:-1], _clip(row[-1], room)] for row in cells]
    lines = []
    for row in cells:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"
