"""Every variant of tests/e2e/test_inline_node_e2e.py through a sidecar in process with the
real sandbox (tests/guard/sidecar/agent.py): ``node -e`` requiring a project file and
printing what it returns runs unasked; a core module, a preload or code hidden after a
comment asks, and after the operator's No none of it ran. The end-to-end file keeps
representatives and takes its table from here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.sidecar.agent import agent, world_project

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

GREET = "module.exports = (n) => 'hello ' + n;\n"
GREETS = "node -e \"console.log(require('./src/greet.js')('pi'))\""
# Each writes pwned.txt when it runs; the operator says No to each.
HOSTILE = {
    "child-process": (
        "node -e \"console.log(require('child_process').execSync('touch pwned.txt').toString())\""
    ),
    "preload": "node -r ./evil.js -e \"console.log(require('./src/greet.js')('pi'))\"",
    "comment": "node -e \"console.log(1) // ; require('fs').writeFileSync('pwned.txt', '')\"",
    "constructor": (
        "node -e \"console.log(require('./src/greet.js').constructor.constructor("
        "'return process')().mainModule.require('fs').writeFileSync('pwned.txt', ''))\""
    ),
    "write-then-require": (
        "cp evil.js src/late.js && node -e \"console.log(require('./src/late'))\""
    ),
}


def node_project(project: Path) -> None:
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "greet.js").write_text(GREET)
    (project / "evil.js").write_text("require('fs').writeFileSync('pwned.txt', '');\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = world_project(tmp_path.resolve() / "project")
    node_project(project)
    return project


def test_requiring_a_project_file_and_printing_runs_unasked(tmp_path: Path, project: Path) -> None:
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(GREETS)
        assert (outcome.asked, outcome.exit_code) == (False, 0), outcome
        assert session.output == "hello pi\n"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hidden_code_asks_and_a_no_runs_none_of_it(
    tmp_path: Path, project: Path, name: str
) -> None:
    with agent(tmp_path / "home", project) as session:
        outcome = session.bash(HOSTILE[name], yes=False)
    assert (outcome.asked, outcome.ran) == (True, False), outcome
    assert "node" in outcome.title
    assert not (project / "pwned.txt").exists()
