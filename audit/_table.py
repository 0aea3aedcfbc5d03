"""Plain-text tables for people. Cells are made terminal-safe: no control characters."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["render_table", "safe_cell", "short_hash"]

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


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    cells = [[safe_cell(c) for c in headers], *[[safe_cell(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"
