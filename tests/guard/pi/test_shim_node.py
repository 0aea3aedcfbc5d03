"""The pi extension shim fails closed without the real pi: ``shim/shim.test.mjs`` (node's own
test runner) loads the shim into a fake pi and points it at a fake sidecar
(``shim/fake_sidecar.mjs``) that cannot start, dies, hangs, answers garbage, another id, a
JSON-RPC error or a reply of the wrong shape, and checks that every such tool call is blocked
with the right reason (on stderr too when there is no UI), that only a recorded Yes lets a
confirmed call through, and that bash runs only in a planned sandbox.

The shim is TypeScript; Node (>= 22.7, the pinned one in ``.cache/node`` when the machine's is
older, as for the end-to-end tests) runs it with ``--experimental-transform-types``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tools.pi.harness import ensure_node

# Node >= 22 comes from npm (.cache/node) when the machine's is older: not in make check.
pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[3]
SHIM = REPO / "guard" / "_pi" / "extension" / "index.ts"
NODE_TEST = Path(__file__).with_name("shim") / "shim.test.mjs"
EXPECTED_TESTS = 125  # every test in shim.test.mjs; a test that silently stops running fails here
TRANSFORM_TYPES = (22, 7, 0)  # the first Node with --experimental-transform-types


def test_every_fail_closed_branch_of_the_shim_blocks(tmp_path: Path) -> None:
    node, _ = ensure_node(REPO, TRANSFORM_TYPES)
    env = {**os.environ, "SHIM_SOURCE": str(SHIM), "SHIM_TEST_DIR": str(tmp_path)}
    env.pop("NODE_OPTIONS", None)
    done = subprocess.run(
        [
            str(node),
            "--experimental-transform-types",
            "--no-warnings",
            "--test-reporter=tap",
            str(NODE_TEST),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    failures = re.findall(r"^not ok \d+ - .*$", done.stdout, re.MULTILINE)
    assert done.returncode == 0 and not failures, (
        "\n".join(failures) + "\n" + done.stdout[-3000:] + done.stderr[-2000:]
    )
    counts = dict(
        re.findall(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", done.stdout, re.M)
    )
    assert counts == {
        "tests": str(EXPECTED_TESTS),
        "pass": str(EXPECTED_TESTS),
        "fail": "0",
        "cancelled": "0",
        "skipped": "0",
        "todo": "0",
    }, done.stdout[-3000:]
