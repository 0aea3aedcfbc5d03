"""pi's own file tools: the verdict's path is the file pi really opens ('@' prefix, spaces)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from guard._evidence.fingerprint import compute_fingerprint, normalize_path
from guard._policy.matching.classify import pi_tool_path
from tests.guard.policy.conftest import World
from tools.pi.harness import PinnedPi

PI_FILE_TOOLS = ("read", "write", "edit", "grep", "find", "ls")
PI_PATH_UTILS = Path("dist/core/tools/path-utils.js")  # in each pinned pi's package

# (as the model wrote it, what pi opens before resolving it against the cwd)
CASES = [
    ("@.env", ".env"),
    ("@@.env", "@.env"),  # only one '@' is stripped
    ("@src/app.py", "src/app.py"),
    ("@~/.ssh/id_rsa", "~/.ssh/id_rsa"),
    ("@/etc/hosts", "/etc/hosts"),
    ("a\u00a0b.txt", "a b.txt"),
    ("@a\u3000b\u2009c.txt", "a b c.txt"),
    ("x\u200bz", "x\u200bz"),  # a zero-width space is not one of pi's unicode spaces
    ("dir@/.env", "dir@/.env"),
    ("@", "."),  # path.resolve(cwd, "") is the cwd
]


@pytest.mark.parametrize(("raw", "opened"), CASES)
def test_pi_tool_path_mirrors_expand_path(raw: str, opened: str) -> None:
    assert pi_tool_path(raw) == opened


@pytest.mark.parametrize("tool", PI_FILE_TOOLS)
@pytest.mark.parametrize(("raw", "opened"), CASES)
def test_the_verdict_names_the_file_pi_opens(
    world: World, tool: str, raw: str, opened: str
) -> None:
    verdict = world.policy().classify(tool, {"path": raw}, world.project)
    expected = normalize_path(opened, world.project)
    assert verdict.path == expected
    assert verdict.targets == (expected,)


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_at_prefixed_dotenv_is_confirmed_on_the_real_file(world: World, tool: str) -> None:
    policy = world.policy()
    verdict = policy.classify(tool, {"path": "@.env"}, world.project)
    plain = policy.classify(tool, {"path": ".env"}, world.project)
    assert (verdict.verdict, verdict.rule_ids) == ("confirm", ("builtin.dotenv",))
    assert verdict.path == plain.path == normalize_path(".env", world.project)
    assert verdict.targets == plain.targets
    # the evidence names the file that will really be written
    fingerprint = compute_fingerprint(
        verdict.action_kind, tool, {"path": "@.env"}, world.project, path=verdict.path
    )
    assert fingerprint.path == normalize_path(".env", world.project)


def test_at_prefix_reaches_home_and_absolute_paths(world: World) -> None:
    policy = world.policy()
    ssh = policy.classify("read", {"path": "@~/.ssh/id_rsa"}, world.project)
    assert ssh.verdict == "confirm"
    assert ssh.path == normalize_path(str(world.home / ".ssh" / "id_rsa"), "/")
    system = policy.classify("write", {"path": "@/etc/hosts"}, world.project)
    assert system.verdict == "block"  # the system runs what /etc holds
    assert system.path == "/etc/hosts"


def test_a_literal_at_name_is_not_what_pi_opens(world: World) -> None:
    world.project_config('[[rule]]\nid = "team.at"\nverdict = "confirm"\npaths = ["@notes"]\n')
    policy = world.policy()
    assert policy.classify("write", {"path": "@notes"}, world.project).verdict == "allow"
    assert policy.classify("write", {"path": "@@notes"}, world.project).verdict == "confirm"


def test_both_quirks_together_reach_a_rule(world: World) -> None:
    world.project_config('[[rule]]\nid = "team.s"\nverdict = "confirm"\npaths = ["team secrets"]\n')
    policy = world.policy()
    verdict = policy.classify("write", {"path": "@team\u00a0secrets"}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.path == normalize_path("team secrets", world.project)


def test_other_tools_keep_the_path_as_written_and_check_pi_forms(world: World) -> None:
    world.project_config('[[rule]]\nid = "team.s"\nverdict = "confirm"\npaths = ["team secrets"]\n')
    policy = world.policy()
    verdict = policy.classify("my_uploader", {"path": "@.env"}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.path == normalize_path("@.env", world.project)
    assert verdict.targets == (verdict.path, normalize_path(".env", world.project))
    spaced = policy.classify("my_uploader", {"path": "@team\u00a0secrets"}, world.project)
    assert spaced.verdict == "confirm"
    assert spaced.path == normalize_path("@team\u00a0secrets", world.project)


@pytest.mark.every_pi
def test_matches_pis_own_resolve_to_cwd(world: World, pinned_pi: PinnedPi) -> None:
    # pinned_pi installs each pinned pi into .cache on first use (make test needs node anyway).
    path_utils = pinned_pi.package_dir / PI_PATH_UTILS
    assert path_utils.is_file(), path_utils
    raws = [raw for raw, _ in CASES]
    script = (
        "import { resolveToCwd } from " + json.dumps(path_utils.as_uri()) + ";\n"
        "const [cwd, raws] = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(raws.map((p) => resolveToCwd(p, cwd))));\n"
    )
    done = subprocess.run(
        [
            str(pinned_pi.node),
            "--input-type=module",
            "-e",
            script,
            json.dumps([str(world.project), raws]),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(world.home)},
        timeout=60,
        check=True,
    )
    opened_by_pi = json.loads(done.stdout)
    policy = world.policy()
    for raw, pi_path in zip(raws, opened_by_pi, strict=True):
        verdict = policy.classify("write", {"path": raw}, world.project)
        assert verdict.path == normalize_path(pi_path, "/"), raw
