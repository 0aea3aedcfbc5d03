"""A user policy file that is broken is named where the operator looks: the footer
(``health``) and ``/guard`` (``status``), not only ``pi-guard policy check``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import serve

BROKEN = [
    '[sandbox]\nnetwork = "off"\nhidden = ["~/secret"]\n[rules\nx = \n',  # bad TOML below
    "this is not toml at all\n",
    '[sandbox]\nnetwork = "off"\n[[rule]]\nid = "x"\nverdict = "allow\n',
    '[sandbox]\nnetwrok = "off"\n',  # a near-miss key
]


def replies(home: Path, *methods: str) -> list[dict[str, Any]]:
    lines = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode() + b"\n"
        for i, m in enumerate(methods)
    )
    out = io.BytesIO()
    assert serve(io.BytesIO(lines), out, home=home) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines() if line]
    assert all("error" not in a for a in answers), answers
    return [a["result"] for a in answers]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    home = tmp_path / "guard-home"
    home.mkdir(mode=0o700)
    return home


def test_a_valid_policy_says_ok(home: Path) -> None:
    (home / "operator-guard.toml").write_text('[sandbox]\nnetwork = "off"\n')
    health, status = replies(home, "health", "status")
    assert "POLICY" not in health["statusText"]
    assert "  policy:       ok" in status["text"].splitlines()
    assert status["policyProblems"] == []


@pytest.mark.parametrize("text", BROKEN)
def test_a_broken_policy_is_named_in_the_footer_and_in_guard(home: Path, text: str) -> None:
    path = home / "operator-guard.toml"
    path.write_text(text)
    health, status = replies(home, "health", "status")
    assert "POLICY: " in health["statusText"] and "see /guard" in health["statusText"]
    assert health["ok"] is True  # the guard still guards, stricter than the file says
    problems = status["policyProblems"]
    assert problems and all(p.startswith(f"{path}:") for p in problems)
    text_lines = status["text"].splitlines()
    (head,) = [line for line in text_lines if line.startswith("  policy:")]
    assert f"{len(problems)} problem" in head and "stricter" in head
    assert f"    {problems[0]}" in text_lines
