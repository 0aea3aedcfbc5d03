"""docs/operator.md shows each dialog as the guard renders it.

``tools/dialogs.py`` renders the examples with the sidecar's own text functions; each must
stand in the page byte for byte. The passkey enrolment's lines are what a real
``pi-guard operator enroll`` prints (its port and one-time token aside).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_runner import invoke
from tools.dialogs import render

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[2] / "docs" / "operator.md"


@pytest.fixture
def rendered() -> Iterator[dict[str, str]]:
    saved = {k: os.environ.get(k) for k in ("TZ", "HOME")}
    try:
        yield render()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        time.tzset()


def code_blocks() -> list[str]:
    """The page's fenced blocks without a language (what a screen shows), each as text."""
    blocks: list[str] = []
    current: list[str] = []
    inside = plain = False
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if inside and plain:
                blocks.append("\n".join(current))
            inside, plain, current = not inside, line == "```", []
        elif inside:
            current.append(line)
    return blocks


@pytest.mark.parametrize("name", ["effects-review", "grant-offer", "headless-wait"])
def test_the_page_shows_the_rendered_dialog(rendered: dict[str, str], name: str) -> None:
    blocks = code_blocks()
    for part in rendered[name].split("\n\n"):
        assert part in blocks, f"docs/operator.md does not show {name} as rendered:\n{part}"


def test_the_rendered_grant_line_is_the_call_dialogs(rendered: dict[str, str]) -> None:
    """The call dialog's example (pinned by the sidecar's tests) offers the same line."""
    assert any(f"  {rendered['grant-offer']}" in b.splitlines() for b in code_blocks())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_enrolment_lines_are_what_enroll_prints(tmp_path: Path) -> None:
    port = _free_port()
    args = ("operator", "enroll", "--label", "my laptop", "--timeout", "1", "--port", str(port))
    result = invoke(*args, home=tmp_path / "home")
    assert result.returncode == 3, result.stderr
    printed = result.stderr.splitlines()[:2]
    shown = [b for b in code_blocks() if b.startswith("operator-guard passkey enrolment")]
    assert len(shown) == 1
    expected = [
        line.replace(str(port), "8790").replace("within 1 s", "within 300 s") for line in printed
    ]
    expected[1] = re.sub(r"token=\S+", "token=…", expected[1])
    assert shown[0].splitlines() == expected


def test_the_page_lines_are_what_approvals_serve_prints(tmp_path: Path) -> None:
    """The page's login lines, from a real ``approvals serve`` (a server: its own process)."""
    port = _free_port()
    assert invoke("keygen", home=tmp_path / "home").returncode == 0
    argv = [sys.executable, "-m", "guard", "--home", str(tmp_path / "home")]
    with subprocess.Popen(
        [*argv, "approvals", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stderr is not None
            printed = [server.stderr.readline().rstrip("\n") for _ in range(2)]
        finally:
            server.terminate()
            server.wait(timeout=10)
    shown = [b for b in code_blocks() if b.startswith("operator-guard approval page:")]
    assert len(shown) == 1
    expected = [
        re.sub(r"token=\S+", "token=…", line.replace(str(port), "8765")) for line in printed
    ]
    assert shown[0].splitlines() == expected
