"""Every configuration file the pinned pi's own docs name is classified by the guard.

pi reads files at its start that name code or commands it runs (extensions, packages in
settings, MCP servers) or that steer the model (skills, prompts, system prompts). This test
reads the docs of the installed pinned current pi and fails when they name a file under a
project's ``.pi/`` or the agent directory that pi's ``write`` tool could write unasked: a new
pi that documents a new configuration file makes the guard classify it before it ships.
The data files the guard deliberately leaves writable are listed with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guard._policy import Policy
from tools.pi.harness import ensure_pi

pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[3]

# Paths the docs name that pi reads or writes as data, never as code or instructions.
DATA: dict[str, str] = {
    "~/.pi/agent/sessions": "session transcripts pi writes (the guard reads them read-only)",
    "~/.pi/agent/tmp": "pi's scratch space",
    "~/.pi/agent/mcp.log": "pi's MCP log, written by pi",
}
_NAMED = re.compile(r"(~/\.pi/agent/|(?<![\w~/.])\.pi/|(?<![\w~/.])\.agents/)([A-Za-z0-9_.-]+)")


def documented() -> set[str]:
    docs = ensure_pi(REPO).package_dir / "docs"
    found: set[str] = set()
    for page in docs.glob("*.md"):
        for prefix, name in _NAMED.findall(page.read_text(encoding="utf-8")):
            name = name.rstrip(".")
            if name and name not in (".", ".."):
                found.add(prefix + name)
    return found


def test_the_docs_name_the_files_this_test_knows_are_there() -> None:
    """A guard against the scan finding nothing (a docs layout change): these are named."""
    assert {".pi/mcp.json", ".pi/settings.json", ".pi/extensions", "~/.pi/agent/mcp.json"} <= (
        documented()
    )


def test_every_documented_pi_file_is_classified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    policy = Policy.load(home / ".pi" / "agent" / "operator-guard", project)
    unclassified: list[str] = []
    for name in sorted(documented()):
        if name in DATA:
            continue
        path = name.replace("~", str(home), 1) if name.startswith("~") else str(project / name)
        for target in (path, path + "/x.ts"):
            verdict = policy.classify("write", {"path": target, "content": "{}"}, project)
            if verdict.verdict == "allow":
                unclassified.append(f"{name} ({target})")
    assert unclassified == [], "pi's docs name files the guard lets the agent write unasked"


@pytest.mark.parametrize(
    "name", [".pi/mcp.json", ".pi/settings.json", ".pi/extensions", "~/.pi/agent/mcp.json"]
)
def test_what_names_code_pi_runs_is_blocked_not_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    policy = Policy.load(home / ".pi" / "agent" / "operator-guard", project)
    path = name.replace("~", str(home), 1) if name.startswith("~") else str(project / name)
    assert policy.classify("write", {"path": path, "content": "{}"}, project).verdict == "block"
