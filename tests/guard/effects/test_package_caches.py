"""Package caches work in the sandbox without the agent writing the operator's own: npm and
pip, twice each (the second run reuses what the first cached), real tools, real bwrap, a
layer per command reviewed as the sidecar does; the user's ``~/.npm`` and ``~/.cache/pip``
are byte for byte what they were."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from guard._effects import Reviewer
from guard._hermetic import git_env, system_program
from guard._sandbox import SpawnContext, plan, spawn
from guard._sandbox.model import LAYER_ENV
from tests.guard.effects.conftest import snapshot

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]


def commit_all(ws: Path) -> None:
    git = [system_program("git"), "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], env=git_env(), check=True, capture_output=True)


class Session:
    def __init__(self, root: Path) -> None:
        self.user = root / "user"
        self.ws = root / "project"
        self.home = root / "guard-home"
        for d in (self.user / ".npm", self.user / ".cache" / "pip", self.ws):
            d.mkdir(parents=True)
        (self.user / ".npm" / "operators-own").write_text("mine\n")
        (self.user / ".cache" / "pip" / "operators-own").write_text("mine\n")
        self.home.mkdir(mode=0o700)
        self.layers = root / "guard-home" / "sessions" / "s1" / "layers"
        self.env = {**os.environ, "HOME": str(self.user)}
        self.env.pop("npm_config_cache", None)
        self.env.pop("PIP_CACHE_DIR", None)
        self.plan = plan(self.ws, self.home, env=self.env, layers=str(self.layers))
        assert self.plan.effects == "review", self.plan.notes
        self.reviewer = Reviewer(self.layers)

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        layer = uuid.uuid4().hex
        wrapped = spawn(self.plan, SpawnContext(command=command, cwd=str(self.ws),
                                                env={**self.env, LAYER_ENV: layer}))  # fmt: skip
        done = subprocess.run(["/bin/bash", "-c", wrapped.command], cwd=self.ws,
                              env=wrapped.env, capture_output=True, text=True, timeout=300,
                              check=False)  # fmt: skip
        review = self.reviewer.review(layer, str(self.ws), protected=lambda _p: False,
                                      mount_points=self.plan.mount_points,
                                      caches=self.plan.cache_stores)  # fmt: skip
        assert review.decision != "held", review.held
        return done


def test_npm_install_twice_through_the_projects_own_cache(tmp_path: Path) -> None:
    session = Session(tmp_path)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "package.json").write_text(json.dumps({"name": "lib", "version": "1.0.0"}))
    (lib / "index.js").write_text("module.exports = 42;\n")
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(session.ws)],
                   cwd=lib, check=True, capture_output=True)  # fmt: skip
    (session.ws / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0"}))
    commit_all(session.ws)  # npm rewrites package.json: committed, git can restore it
    before = snapshot(session.user)
    first = session.run("npm install --no-audit --no-fund ./lib-1.0.0.tgz")
    assert first.returncode == 0, first.stderr[-600:]
    assert (session.ws / "node_modules" / "lib" / "index.js").is_file()
    shutil.rmtree(session.ws / "node_modules")
    (session.ws / "lib-1.0.0.tgz").unlink()  # only the cache has it now
    second = session.run("npm install --no-audit --no-fund --offline")
    assert second.returncode == 0, second.stderr[-600:]
    assert (session.ws / "node_modules" / "lib" / "index.js").is_file()
    assert snapshot(session.user) == before  # the operator's ~/.npm never changed
    store = Path(session.plan.cache_stores[0])
    assert any(store.rglob("*")), "npm's cache writes went to the project's store"


def tiny_wheel(directory: Path) -> Path:
    """A minimal, valid pure-Python wheel (PEP 427), made without any build tool."""
    wheel = directory / "tinypkg-1.0-py3-none-any.whl"
    files = {
        "tinypkg/__init__.py": "VALUE = 1\n",
        "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: "
        "true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**files, "tinypkg-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
    return wheel


def test_pip_install_into_a_project_venv_twice(tmp_path: Path) -> None:
    session = Session(tmp_path)
    tiny_wheel(session.ws)
    before = snapshot(session.user)
    made = session.run(f"{sys.executable} -m venv .venv")
    assert made.returncode == 0, made.stderr[-600:]
    for attempt in range(2):
        done = session.run(
            ".venv/bin/python -m pip install --no-index --force-reinstall "
            "./tinypkg-1.0-py3-none-any.whl && .venv/bin/python -c "
            "'import tinypkg; print(tinypkg.VALUE)'"
        )
        assert done.returncode == 0, (attempt, done.stdout[-1500:], done.stderr[-1500:])
        assert done.stdout.strip().endswith("1")
    assert snapshot(session.user) == before  # the operator's ~/.cache/pip never changed


def cargo_env() -> dict[str, str]:
    """Where cargo is (PATH, else rustup's usual place) and, for rustup's proxy, its home:
    the test's user home is a fresh one, with no toolchain of its own."""
    real_home = Path(os.path.expanduser("~"))
    path = os.environ.get("PATH", "") + os.pathsep + str(real_home / ".cargo" / "bin")
    cargo = shutil.which("cargo", path=path)
    assert cargo is not None, "cargo is needed (Debian: apt-get install cargo)"
    env = {"PATH": os.path.dirname(cargo) + os.pathsep + os.environ.get("PATH", "")}
    if os.path.basename(os.path.realpath(cargo)) == "rustup":
        env["RUSTUP_HOME"] = os.environ.get("RUSTUP_HOME", str(real_home / ".rustup"))
    return env


def test_cargo_fetches_a_git_dependency_once_and_builds_offline_from_the_cache(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path)
    (session.user / ".cargo").mkdir()
    (session.user / ".cargo" / "operators-own").write_text("mine\n")
    session.env.update(cargo_env())
    session.env.pop("CARGO_HOME", None)  # ~/.cargo of the test's user: the cache under test
    dep = session.ws / "deps" / "answer"
    (dep / "src").mkdir(parents=True)
    (dep / "Cargo.toml").write_text(
        '[package]\nname = "answer"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (dep / "src" / "lib.rs").write_text("pub fn answer() -> u32 { 42 }\n")
    commit_all(dep)
    (session.ws / "src").mkdir()
    (session.ws / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[dependencies]\nanswer = {{ git = "file://{dep}" }}\n'
    )
    (session.ws / "src" / "main.rs").write_text('fn main() { println!("{}", answer::answer()); }\n')
    (session.ws / ".gitignore").write_text("target/\n")
    commit_all(session.ws)
    before = snapshot(session.user)
    first = session.run("cargo run -q")  # clones the dependency into cargo's git cache
    assert first.returncode == 0, first.stderr[-1500:]
    assert first.stdout.strip() == "42"
    shutil.rmtree(session.ws / "target")
    # Offline, with the dependency's repository gone: only the cache can have it now.
    shutil.rmtree(dep)
    second = session.run("cargo run -q --offline")
    assert second.returncode == 0, second.stderr[-1500:]
    assert second.stdout.strip() == "42"
    assert snapshot(session.user) == before  # the operator's ~/.cargo never changed
    stores = [Path(s) for s in session.plan.cache_stores]
    assert any((s / "git" / "db").is_dir() for s in stores), "cargo's git cache went nowhere"
