"""Every file name of the guard's home and every environment variable of ours is named once,
in ``guard/_home.py``: no other module of guard spells one (docstrings and comments aside)."""

from __future__ import annotations

import ast
from pathlib import Path

import guard._home as home

GUARD = Path(__file__).resolve().parents[2] / "guard"

FILE_NAMES = {
    value
    for name, value in vars(home).items()
    if name.isupper() and name.endswith("_FILE") and isinstance(value, str)
}
"""The home's file names (``audit.jsonl``, ``signing.key``, ``approvals.sock`` …)."""

STILL_SPELLED: dict[str, set[str]] = {
    "guard/_policy/cache.py": {"operator-guard.toml"},
}
"""Modules that still spell a name of the home themselves. The list only shrinks: a module
that no longer does fails this test until its entry is gone."""


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (a statement of their own)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _spelled() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(GUARD.rglob("*.py")):
        if path.name == "_home.py" and path.parent == GUARD:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in skip:
                continue
            text = node.value
            if text in FILE_NAMES or text.startswith((home.ENV_PREFIX, home.OLD_ENV_PREFIX)):
                rel = path.relative_to(GUARD.parent).as_posix()
                found.setdefault(rel, set()).add(text)
    return found


def _env_reads_by_literal() -> list[str]:
    out = []
    for path in sorted(GUARD.rglob("*.py")):
        if path.name == "_home.py" and path.parent == GUARD:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("env", "env_flag")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                out.append(f"{path.relative_to(GUARD.parent)}:{node.lineno}")
    return out


def test_no_module_but_home_spells_a_file_name_of_the_home_or_a_variable_of_ours() -> None:
    assert _spelled() == STILL_SPELLED


def test_every_variable_of_ours_is_read_by_its_name_in_home() -> None:
    assert _env_reads_by_literal() == []


def test_the_home_names_its_files_and_variables() -> None:
    assert {"audit.jsonl", "signing.key", "keyring.json", "ledger.sqlite3"} <= FILE_NAMES
    assert home.LAYER_ENV == home.ENV_PREFIX + "LAYER"
    assert {home.HOME_ENV, home.LEDGER_ENV, home.ANCHOR_ENV, home.LOG_LEVEL_ENV} == {
        "HOME",
        "LEDGER",
        "ANCHOR_DIR",
        "LOG_LEVEL",
    }
