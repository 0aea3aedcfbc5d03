"""docs/operator.md, "Stop asking me about X": the recipe does what the page says.

The page's user rules are loaded as the user's file of a real home and judged through
``pi-guard evaluate``: the relaxed rule lets exactly what it names through, a call beyond it
still asks, a built-in block stays a block, and the pitfall the page warns of (``args`` in an
allow rule matches any argument) is what the guard does today. A project file's ``[mcp]`` is
refused, as the page says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import invoke

PAGE = Path(__file__).resolve().parents[3] / "docs" / "operator.md"


def _recipe_blocks() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Stop asking me about X\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```toml\n(.*?)```", section, flags=re.S)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    rules = next(b for b in _recipe_blocks() if "me.rm-build" in b)
    (home / "operator-guard.toml").write_text(rules)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "build").mkdir(parents=True)
    (project / "src").mkdir()
    return project


def _evaluate(home: Path, project: Path, tool: str, tool_input: dict[str, Any]) -> Any:
    args = ("evaluate", "--tool", tool, "--input", json.dumps(tool_input), "--cwd", str(project))
    result = invoke(*args, home=home)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_recipes_user_file_is_valid(home: Path) -> None:
    result = invoke("policy", "check", home=home)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["problems"] == []


def test_the_relaxed_rule_lets_only_what_it_names_through(home: Path, project: Path) -> None:
    build = _evaluate(home, project, "bash", {"command": "rm -rf build"})
    assert (build["verdict"], build["ruleIds"]) == ("allow", ["me.rm-build"])
    assert build["reasons"] == ["builtin.rm relaxed by the user's rule me.rm-build"]
    both = _evaluate(home, project, "bash", {"command": "rm -rf build src"})
    assert (both["verdict"], both["ruleIds"]) == ("confirm", ["builtin.rm"])


def test_mcp_tools_by_name_and_a_block_that_stays(home: Path, project: Path) -> None:
    get = _evaluate(home, project, "mcp__github__get_issue", {"number": 3})
    assert (get["verdict"], get["ruleIds"]) == ("allow", ["me.github-reads"])
    create = _evaluate(home, project, "mcp__github__create_issue", {"title": "x"})
    assert create["verdict"] == "confirm"
    key = _evaluate(home, project, "mcp__github__get_issue", {"path": "~/.ssh/id_rsa"})
    assert key["verdict"] == "block"


def test_the_args_pitfall_is_as_the_page_warns(tmp_path: Path, project: Path) -> None:
    """``args`` matches when any argument does: the page says not to relax with it."""
    assert "git push --force origin me/fix main" in PAGE.read_text(encoding="utf-8")
    home = tmp_path / "pitfall"
    home.mkdir()
    (home / "operator-guard.toml").write_text(
        '[[rule]]\nid = "me.push-my-branches"\nverdict = "allow"\nprogram = ["git"]\n'
        'subcommand = ["push"]\nargs = ["me/*"]\nrelaxes = ["builtin.git-push-force"]\n'
    )
    main = _evaluate(home, project, "bash", {"command": "git push --force origin main"})
    assert main["verdict"] == "confirm"
    ride = _evaluate(home, project, "bash", {"command": "git push --force origin me/fix main"})
    assert ride["verdict"] == "allow"


def test_a_projects_mcp_table_is_refused(tmp_path: Path) -> None:
    (hints,) = [b for b in _recipe_blocks() if b.startswith("[mcp]")]
    file = tmp_path / "operator-guard.toml"
    file.write_text(hints)
    result = invoke("policy", "check", str(file), "--layer", "project", home=tmp_path / "h")
    assert result.returncode == 2
    assert "[mcp] is read from the user's file only" in result.stderr
