"""``pi-guard policy show`` / ``policy check``, run as the operator runs them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli_runner import Result, invoke
from tests.guard.policy.conftest import World


def run(world: World, *args: str) -> Result:
    env = {**os.environ, "HOME": str(world.home)}
    env.pop("PI_OPERATOR_GUARD_HOME", None)
    env.pop("PI_CODING_AGENT_DIR", None)
    return invoke(*args, home=world.guard_home, env=env, cwd=world.project)


def test_policy_show_lists_layers_rules_and_ignored(world: World) -> None:
    world.project_config(
        '[[rule]]\nid = "team.apply"\nverdict = "confirm"\nprogram = "kubectl"\n'
        'subcommand = ["apply"]\n\n'
        '[[rule]]\nid = "team.relax"\nverdict = "allow"\nprogram = "rm"\nrelaxes = ["builtin.rm"]\n'
    )
    done = run(world, "policy", "show")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    layers = {layer["layer"]: layer["status"] for layer in data["layers"]}
    assert layers == {"builtin": "loaded", "user": "absent", "project": "loaded"}
    by_id = {rule["id"]: rule for rule in data["rules"]}
    assert by_id["team.apply"]["layer"] == "project"
    assert by_id["team.apply"]["match"] == {"program": ["kubectl"], "subcommand": ["apply"]}
    assert by_id["builtin.guard-home"]["verdict"] == "block"
    assert "team.relax" not in by_id
    assert [item["id"] for item in data["ignored"]] == ["team.relax"]
    assert {check["id"] for check in data["checks"]} >= {"builtin.eval", "builtin.parse-error"}
    assert data["placeholders"]["GUARD_HOME"] == str(world.guard_home)
    assert "strictest wins" in data["precedence"]


def test_policy_check_valid_and_invalid(world: World, tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[[rule]]\nid = "me.x"\nverdict = "confirm"\ntools = ["deploy"]\n')
    done = run(world, "policy", "check", str(good))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"file": str(good), "valid": True, "problems": []}

    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nid = "me.x"\nverdict = "sometimes"\ntools = ["deploy"]\n')
    done = run(world, "policy", "check", str(bad))
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert report["valid"] is False
    assert report["problems"][0].startswith(f"{bad}:3: rule[0].verdict: ")
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert f"{bad}:3" in done.stderr
