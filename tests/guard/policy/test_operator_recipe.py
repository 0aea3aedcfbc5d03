"""docs/operator.md, "Stop asking me about X": the recipe does what the page says.

The page's user rules are loaded as the user's file of a real home and judged through
``pi-guard evaluate``: the relaxed rule lets exactly what it names through, a call beyond it
still asks, a built-in block stays a block, and ``args`` in an allow rule covers every operand
(a branch riding along still asks). A project file's ``[mcp]`` is refused, as the page says.
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


PUSH_RULE = (
    '[[rule]]\nid = "me.push-my-branches"\nverdict = "allow"\nprogram = ["git"]\n'
    'subcommand = ["push"]\nargs = ["origin", "me/*"]\nunless_flags = ["--all", "--mirror"]\n'
    'relaxes = ["builtin.git-push-force"]\n'
)


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("git push --force origin me/fix", "allow"),
        ("git push -f origin me/fix me/other", "allow"),
        ("git push --force origin main", "confirm"),
        # every operand must match, not any: the branch that rides along still asks
        ("git push --force origin me/fix main", "confirm"),
        ("git push --force origin main me/fix", "confirm"),
        ("git push --force upstream me/fix", "confirm"),
        ("git push --force origin me/fix:main", "confirm"),
        ("git push --force origin +me/fix:main", "confirm"),
        ("git push --force origin me/fix:refs/heads/main", "confirm"),
        ('git push --force origin "$BRANCH"', "confirm"),
        ("git push --force origin me/fix $(echo main)", "confirm"),
        ("git push --force origin -- me/fix main", "confirm"),
        ("git push --force", "confirm"),  # no operand: the upstream, whatever it is
        ("git push --force --all origin", "confirm"),
    ],
)
def test_an_allow_rules_args_must_cover_every_operand(
    tmp_path: Path, project: Path, command: str, verdict: str
) -> None:
    """The page's rule: ``args`` in an allow rule judges every operand after the
    subcommand (``git push --force origin me/fix main`` once rode along on ``me/fix``)."""
    assert "`git push --force origin me/fix main`" in PAGE.read_text(encoding="utf-8")
    home = tmp_path / "pushes"
    home.mkdir()
    (home / "operator-guard.toml").write_text(PUSH_RULE)
    assert _evaluate(home, project, "bash", {"command": command})["verdict"] == verdict


def test_a_confirm_rules_args_still_match_any_argument(tmp_path: Path, project: Path) -> None:
    """A restriction catches a call when any argument matches (it may only catch more)."""
    home = tmp_path / "restricts"
    home.mkdir()
    (home / "operator-guard.toml").write_text(
        '[[rule]]\nid = "me.no-main"\nverdict = "confirm"\nprogram = ["git"]\n'
        'subcommand = ["push"]\nargs = ["main"]\n'
    )
    for command in ("git push origin me/fix main", "git push origin main me/fix"):
        found = _evaluate(home, project, "bash", {"command": command})
        assert (found["verdict"], found["ruleIds"]) == ("confirm", ["me.no-main"]), command


def test_a_projects_mcp_table_is_refused(tmp_path: Path) -> None:
    (hints,) = [b for b in _recipe_blocks() if b.startswith("[mcp]")]
    file = tmp_path / "operator-guard.toml"
    file.write_text(hints)
    result = invoke("policy", "check", str(file), "--layer", "project", home=tmp_path / "h")
    assert result.returncode == 2
    assert "[mcp] is read from the user's file only" in result.stderr
