"""The JavaScript reader against a real node: its list of core modules is node's, and the code
it lets run unasked is what node runs (a project file's export, a package's field).

The node is the one pi runs on here (the machine's, or the pinned one from npm).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from guard._policy.bash.running.javascript import NODE_CORE, node_allowed
from tools.pi.harness import ensure_node

pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[5]


def _node(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    node, _ = ensure_node(REPO, (18, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
    return subprocess.run(
        [str(node), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_every_bare_core_module_of_node_is_known(tmp_path: Path) -> None:
    listed = _node(tmp_path, "-p", "require('module').builtinModules.join(' ')")
    bare = {m for m in listed.stdout.split() if "/" not in m and not m.startswith("node:")}
    assert len(bare) > 40
    assert bare - NODE_CORE == set()


@pytest.mark.parametrize(
    ("flag", "code", "printed"),
    [
        ("-e", "console.log(require('./src/greet.js')('pi'))", "hello    pi"),
        ("-p", "require('./src/greet.js')('pi')", "hello    pi"),
        ("-e", "console.log(require('./package.json').version)", "1.0.0"),
        ("-p", "require('left-pad').name", "leftPad"),
        (
            "-e",
            "console.log(1);\nconsole.log((1 + 2) * 3 % 4, [1, 'a'], {n: 1})",
            "1\n1 [ 1, 'a' ] { n: 1 }",
        ),
        ("-e", "console.log(`t`, -1, true, null)", "t -1 true null"),
    ],
)
def test_what_runs_unasked_is_what_node_runs(
    tmp_path: Path, flag: str, code: str, printed: str
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "greet.js").write_text(
        "const pad = require('left-pad');\nmodule.exports = (n) => 'hello ' + pad(n, 5);\n"
    )
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    (tmp_path / "node_modules" / "left-pad").mkdir(parents=True)
    (tmp_path / "node_modules" / "left-pad" / "index.js").write_text(
        "module.exports = function leftPad(s, n) { return String(s).padStart(n) };\n"
    )
    assert node_allowed(code, prints=flag == "-p")
    done = _node(tmp_path, flag, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == printed


@pytest.mark.parametrize(
    ("code", "stdout", "returncode"),
    [
        # what each hides, shown by node itself: the reader refuses all of them
        (
            "console.log(require('./x.js').constructor.constructor('return typeof process')())",
            "object",
            0,
        ),
        # a line break is no statement end before "(": node calls console.log's result
        ("console.log(1)\n(console.log)(typeof require)", "1", 1),
        ("console.log(`${typeof require}`)", "function", 0),
    ],
)
def test_code_that_reaches_further_than_it_reads_is_refused(
    tmp_path: Path, code: str, stdout: str, returncode: int
) -> None:
    (tmp_path / "x.js").write_text("module.exports = {};\n")
    assert node_allowed(code, prints=False) is False
    done = _node(tmp_path, "-e", code)
    assert (done.stdout.strip(), done.returncode) == (stdout, returncode)
