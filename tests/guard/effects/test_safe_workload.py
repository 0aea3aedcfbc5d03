"""A safe workload, run for real in the sandbox on a layer per command, holds nothing it
should not (goal: at most 2 % of commands held; docs/performance.md lists the run).

The workspace is a git repository with a small C project, a Python package with a test and
a Node package that depends on a local tarball; the commands are what an agent does every
day: build, test, install, format, commit, branch, rebase, clean an ignored build directory
after a yes. Each command's layer is reviewed exactly as the sidecar does it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from guard._effects import Reviewer
from guard._hermetic import git_env, system_program
from guard._policy import Policy
from guard._sandbox import SpawnContext, plan, spawn
from guard._sandbox.model import LAYER_ENV

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]

GIT_ID = ["-c", "user.name=Agent", "-c", "user.email=agent@example.org"]

WORKLOAD: list[tuple[str, tuple[str, ...]]] = [
    ("make", ()),
    ("./hello", ()),
    ("make clean && make", ()),
    (f"{sys.executable} -m pytest -q -p no:cacheprovider tests", ()),
    ("npm install --no-audit --no-fund --offline --cache .npm-cache ./vendor/lib-1.0.0.tgz", ()),
    ("npm test", ()),
    (f"{sys.executable} -m ruff format pkg", ()),
    ("git add -A && git {id} commit -qm 'format and deps'", ()),
    ("git checkout -q -b feature && echo 'def g(): return 2' >> pkg/m.py", ()),
    ("git add -A && git {id} commit -qm 'add g'", ()),
    (
        "git checkout -q main && echo '// note' >> hello.c && git add -A && git {id} commit -qm n",
        (),
    ),
    ("git checkout -q feature && git {id} rebase -q main", ()),
    ("git checkout -q main && git {id} merge -q --no-edit feature", ()),
    ("mkdir -p build && cp hello build/ && ls build", ()),
    ("rm -rf build", ("build",)),  # after the operator's yes to exactly this
    ("git log --oneline | head -3 && git status --short", ()),
]


def git(repo: Path, *args: str) -> None:
    subprocess.run([system_program("git"), "-C", str(repo), *GIT_ID, *args], env=git_env(),
                   check=True, capture_output=True)  # fmt: skip


def make_project(ws: Path) -> None:
    (ws / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    (ws / "Makefile").write_text("hello: hello.c\n\tcc -o hello hello.c\nclean:\n\trm -f hello\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "m.py").write_text("def f( x ):\n    return x+1\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_m.py").write_text(
        "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom pkg.m import f\n\n"
        "def test_f():\n    assert f(1) == 2\n"
    )
    lib = ws.parent / "lib-src"
    lib.mkdir()
    (lib / "package.json").write_text(
        json.dumps({"name": "lib", "version": "1.0.0", "main": "i.js"})
    )
    (lib / "i.js").write_text("module.exports = () => 42;\n")
    (ws / "vendor").mkdir()
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(ws / "vendor")],
                   cwd=lib, check=True, capture_output=True)  # fmt: skip
    (ws / "package.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "private": True,
        "scripts": {"test": "node -e \"process.exit(require('lib')() === 42 ? 0 : 1)\""},
    }))  # fmt: skip
    (ws / ".gitignore").write_text("hello\nbuild/\nnode_modules/\n.npm-cache/\n__pycache__/\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")


def test_a_safe_workload_holds_nothing(tmp_path: Path) -> None:
    if shutil.which("npm") is None or shutil.which("cc") is None:
        raise AssertionError("the workload needs npm and a C compiler (make test installs them)")
    ws = tmp_path / "project"
    ws.mkdir()
    home = tmp_path / "guard-home"
    home.mkdir(mode=0o700)
    make_project(ws)
    layers = home / "layers" / "workload"
    session = plan(ws, home, layers=str(layers))
    assert session.effects == "review", session.notes
    reviewer = Reviewer(layers)
    policy = Policy.load(home, ws)
    ignore = frozenset({"builtin.git-internals", "builtin.outside-workspace"})
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    held: list[str] = []
    for command, approved in WORKLOAD:
        text = command.format(id=" ".join(GIT_ID))
        layer = uuid.uuid4().hex
        wrapped = spawn(
            session, SpawnContext(command=text, cwd=str(ws), env={**env, LAYER_ENV: layer})
        )
        done = subprocess.run(["/bin/bash", "-c", wrapped.command], cwd=ws, env=wrapped.env,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert done.returncode == 0, (text, done.stdout[-800:], done.stderr[-800:])
        review = reviewer.review(
            layer,
            str(ws),
            protected=lambda p: policy.protects_write(p, ws, ignore=ignore),
            approved=tuple(os.path.realpath(ws / a) for a in approved),
            mount_points=session.mount_points,
        )
        if review.decision == "held":
            held.append(f"{text}: {[(h.effect.path, h.reason) for h in review.held]}")
    assert len(held) <= 0.02 * len(WORKLOAD), held
    assert (ws / "node_modules" / "lib" / "i.js").is_file()
    assert not (ws / "build").exists()
    assert "def g" in (ws / "pkg" / "m.py").read_text()
