"""Every configuration file the pinned pi's own docs name is classified by the guard.

pi reads files at its start that name code or commands it runs (extensions, packages in
settings, MCP servers) or that steer the model (skills, prompts, system prompts, context files).
This test reads the docs of the installed pinned current pi and fails when they name a file
under a project's ``.pi/`` or the agent directory (``~/.pi/agent/<name>``, ``<agent-dir>/<name>``),
or a context file (``AGENTS.md`` …), that pi's ``write`` tool could write unasked: a new pi that
documents a new configuration file makes the guard classify it before it ships. It reads pi's
own code too, for the project's ``.pi/<name>`` paths it joins (``.pi/npm`` and ``.pi/git``,
where the project's packages are installed, are named by the code only) and the resources that
make pi ask for project trust. The data files the guard deliberately leaves writable are listed
with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guard._policy import Policy
from tools.pi.harness import ensure_pi

pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[3]

# Paths the docs name that pi reads or writes as data, never as code or instructions. (The
# agent directory is blocked as a whole all the same.)
DATA: dict[str, str] = {
    "~/.pi/agent/sessions": "session transcripts pi writes (the guard reads them read-only)",
    "~/.pi/agent/tmp": "pi's scratch space",
    "~/.pi/agent/mcp.log": "pi's MCP log, written by pi",
}
_NAMED = re.compile(
    r"(~/\.pi/agent/|<agent-dir>/|(?<![\w~/.>-])\.pi/|(?<![\w~/.>-])\.agents/)([A-Za-z0-9_.-]+)"
)
# Backticked Markdown names in a line or section about context files (docs/configuration.md
# "Context files", docs/security.md): pi loads them from the working folder and its parents.
_CONTEXT = re.compile(r"`([A-Za-z_.-]+\.(?:md|MD))`")
# The project's .pi/<name> paths pi's code joins, and the resources that make it ask for trust.
_JOINED = re.compile(r'CONFIG_DIR_NAME,\s*"([^"/]+)"')
_TRUST = re.compile(r"TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES\s*=\s*\[([^\]]*)\]")


def _package() -> Path:
    return ensure_pi(REPO).package_dir


def documented() -> set[str]:
    found: set[str] = set()
    for page in (_package() / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for prefix, name in _NAMED.findall(text):
            name = name.rstrip(".")
            if name and name not in (".", ".."):
                found.add(("~/.pi/agent/" if prefix == "<agent-dir>/" else prefix) + name)
        section = ""
        for line in text.splitlines():
            if line.startswith("#"):
                section = line.lower()
            if "context file" in section or "context file" in line.lower():
                found.update(_CONTEXT.findall(line))
    return found


def in_pis_code() -> set[str]:
    found: set[str] = set()
    for script in (_package() / "dist").rglob("*.js"):
        text = script.read_text(encoding="utf-8", errors="replace")
        found.update(".pi/" + name for name in _JOINED.findall(text))
        for listed in _TRUST.findall(text):
            found.update(".pi/" + name for name in re.findall(r'"([^"]+)"', listed))
    return found


def _world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Policy]:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return home, project, Policy.load(home / ".pi" / "agent" / "operator-guard", project)


def _where(name: str, home: Path, project: Path) -> str:
    return name.replace("~", str(home), 1) if name.startswith("~") else str(project / name)


def test_the_docs_and_the_code_name_the_files_this_test_knows_are_there() -> None:
    """A guard against the scans finding nothing (a docs or build layout change)."""
    assert {
        ".pi/mcp.json",
        ".pi/settings.json",
        ".pi/extensions",
        "~/.pi/agent/mcp.json",
        "~/.pi/agent/keybindings.json",
        ".agents/skills",
        "AGENTS.md",
        "CLAUDE.md",
    } <= documented()
    assert {".pi/mcp.json", ".pi/settings.json", ".pi/npm", ".pi/git", ".pi/skills"} <= (
        in_pis_code()
    )


def test_every_documented_pi_file_is_classified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project, policy = _world(tmp_path, monkeypatch)
    unclassified: list[str] = []
    for name in sorted((documented() | in_pis_code()) - set(DATA)):
        path = _where(name, home, project)
        # a context file counts in any folder below the workspace too
        places = [path, str(project / "sub" / name)] if "/" not in name else [path]
        for target in [*places, path + "/x.ts"]:
            verdict = policy.classify("write", {"path": target, "content": "{}"}, project)
            if verdict.verdict == "allow":
                unclassified.append(f"{name} ({target})")
    assert unclassified == [], "pi names files the guard lets the agent write unasked"


@pytest.mark.parametrize(
    "name",
    [
        ".pi/mcp.json",
        ".pi/settings.json",
        ".pi/extensions",
        ".pi/npm",
        ".pi/git",
        "~/.pi/agent/mcp.json",
        "~/.pi/agent/mcp-auth.json",
        "~/.pi/agent/trust.json",
    ],
)
def test_what_names_code_pi_runs_is_blocked_not_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    home, project, policy = _world(tmp_path, monkeypatch)
    path = _where(name, home, project)
    assert policy.classify("write", {"path": path, "content": "{}"}, project).verdict == "block"
