"""A sandbox people can work in, in the real pi: package installs through the project's own
caches (npm, pip into a project venv, cargo), twice each with the second run served from the
cache, the operator's own caches never written; and a command that finds no network is told
why without being told how to open it. Runs on both pinned pi versions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from guard._hermetic import git_env, system_program
from tests.guard.effects.conftest import snapshot as snapshot_all
from tests.guard.effects.test_package_caches import cargo_env, tiny_wheel
from tools.pi.harness import is_effects_dialog
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, result_text, tool_ends, turns
from .test_sandbox_e2e import write_user_policy

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def yes_but_hold_nothing(request: Mapping[str, Any]) -> bool:
    """Yes to any dialog before a call; an install that is held afterwards fails the test."""
    assert not is_effects_dialog(request), request.get("message")
    return True


def commit_project(project: Path) -> None:
    git = [system_program("git"), "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], env=git_env(), check=True, capture_output=True)


def run_twice(
    world: World,
    server: ScriptedModelServer,
    first: str,
    between: Any,
    second: str,
    env: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """Two prompts in one session, ``between()`` on the host in between; each result text."""
    server.add_scenario("first", turns(bash(first)))
    server.add_scenario("second", turns(bash(second)))
    with world.rpc(env=env) as pi:
        (one,) = tool_ends(pi.prompt("scenario:first", yes_but_hold_nothing, timeout=240))
        between()
        (two,) = tool_ends(pi.prompt("scenario:second", yes_but_hold_nothing, timeout=240))
    return result_text(one), result_text(two)


# The guard's own note of the homes it opened (not the agent's doing, written as pi starts).
_GUARD_STATE = ".local/state/pi-operator-guard"


def snapshot(user: Path) -> dict[str, tuple[str, object]]:
    """The operator's home as the agent's commands could change it (the guard's own state
    and the folders holding it left out)."""
    return {
        k: v
        for k, v in snapshot_all(user).items()
        if not (k == _GUARD_STATE or k.startswith(_GUARD_STATE + "/"))
        and not (v[0] == "dir" and _GUARD_STATE.startswith(k + "/"))
    }


def operator_caches(world: World) -> Path:
    assert world.user_home is not None
    for cache in (".npm", ".cache/pip", ".cargo"):
        (world.user_home / cache).mkdir(parents=True, exist_ok=True)
        (world.user_home / cache / "operators-own").write_text("mine\n")
    return world.user_home


def test_npm_install_twice_and_the_operators_npm_cache_is_untouched(
    world: World, model_server: ScriptedModelServer
) -> None:
    user = operator_caches(world)
    lib = world.tmp / "lib"
    lib.mkdir()
    (lib / "package.json").write_text(json.dumps({"name": "lib", "version": "1.0.0"}))
    (lib / "index.js").write_text("module.exports = 42;\n")
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(world.project)],
                   cwd=lib, check=True, capture_output=True)  # fmt: skip
    (world.project / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0"}))
    commit_project(world.project)
    before = snapshot(user)

    def only_the_cache_has_it() -> None:
        shutil.rmtree(world.project / "node_modules")
        (world.project / "lib-1.0.0.tgz").unlink()

    one, two = run_twice(
        world,
        model_server,
        "npm install --no-audit --no-fund ./lib-1.0.0.tgz && echo NPM-FIRST-OK",
        only_the_cache_has_it,
        "npm install --no-audit --no-fund --offline && node -p \"require('lib')\"",
    )
    assert "NPM-FIRST-OK" in one, one
    assert two.strip().endswith("42"), two
    assert (world.project / "node_modules" / "lib" / "index.js").is_file()
    assert snapshot(user) == before


def test_pip_install_into_a_project_venv_twice(
    world: World, model_server: ScriptedModelServer
) -> None:
    user = operator_caches(world)
    tiny_wheel(world.project)
    subprocess.run([sys.executable, "-m", "venv", str(world.project / ".venv")], check=True)
    (world.project / ".gitignore").write_text(".venv/\n")
    commit_project(world.project)
    before = snapshot(user)
    install = (
        ".venv/bin/python -m pip install --no-index --force-reinstall "
        "./tinypkg-1.0-py3-none-any.whl >/dev/null && "
        ".venv/bin/python -c 'import tinypkg; print(\"PIP-OK\", tinypkg.VALUE)'"
    )
    one, two = run_twice(world, model_server, install, lambda: None, install)
    assert "PIP-OK 1" in one and "PIP-OK 1" in two, (one, two)
    assert snapshot(user) == before


def test_cargo_builds_a_git_dependency_then_offline_from_the_projects_cache(
    world: World, model_server: ScriptedModelServer
) -> None:
    user = operator_caches(world)
    dep = world.project / "deps" / "answer"
    (dep / "src").mkdir(parents=True)
    (dep / "Cargo.toml").write_text(
        '[package]\nname = "answer"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (dep / "src" / "lib.rs").write_text("pub fn answer() -> u32 { 42 }\n")
    commit_project(dep)
    (world.project / "src").mkdir()
    (world.project / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[dependencies]\nanswer = {{ git = "file://{dep}" }}\n'
    )
    (world.project / "src" / "main.rs").write_text(
        'fn main() { println!("ANSWER-{}", answer::answer()); }\n'
    )
    (world.project / ".gitignore").write_text("target/\n")
    commit_project(world.project)
    before = snapshot(user)

    def only_the_cache_has_it() -> None:
        shutil.rmtree(world.project / "target")
        shutil.rmtree(dep)

    one, two = run_twice(
        world,
        model_server,
        "cargo run -q",
        only_the_cache_has_it,
        "cargo run -q --offline",
        env=cargo_env(),
    )
    assert "ANSWER-42" in one and "ANSWER-42" in two, (one, two)
    assert snapshot(user) == before


def test_no_network_is_said_to_the_model_and_the_setting_only_to_the_operator(
    world: World, model_server: ScriptedModelServer
) -> None:
    write_user_policy(world, '[sandbox.network]\nmode = "off"\n')
    model_server.add_scenario(
        "offline", turns(bash("curl -sS -m 5 https://registry.npmjs.org/ -o /dev/null"))
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:offline", yes_but_hold_nothing)
    (end,) = tool_ends(events)
    text = result_text(end)
    assert "operator-guard: the agent's commands have no network in this session." in text, text
    assert "[sandbox" not in text and "mode" not in text
    hints = [
        e.get("message", "")
        for e in events
        if e.get("type") == "extension_ui_request" and e.get("method") == "notify"
    ]
    assert any('[sandbox.network] mode = "allowlist"' in h for h in hints), hints
