"""The README's offline TUI recipe works: ``python -m tools.pi.tui`` starts pi's own terminal
UI with the guard against the scripted model, the first call asks, and Enter declines it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .terminal import Terminal

pytestmark = [pytest.mark.e2e, pytest.mark.npm, pytest.mark.usefixtures("bwrap_required")]

ROOT = Path(__file__).resolve().parents[2]


def test_the_tui_recipe_asks_and_enter_declines() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    with Terminal([sys.executable, "-m", "tools.pi.tui"], cwd=ROOT, env=env) as term:
        term.wait_for("operator-guard: allow destructive bash?", timeout=300)
        term.wait_for("Command:  rm -rf build")
        mark = term.mark()
        term.type("\r")  # "No" is preselected
        term.wait_for("the operator declined it", after=mark)
    # One session in a home removed at its end: the recipe starts no fork server for a next.
    assert _fork_servers("pi-guard-tui-") == []


def _fork_servers(home_part: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv]
        if "--fork-server" in words and any(home_part in w for w in words):
            found.append(" ".join(words))
    return found
