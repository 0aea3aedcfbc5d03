"""Path globs: '..', absolute vs relative, symlinks, case, pi's path quirks, the guard home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard._evidence.fingerprint import normalize_path
from guard._policy import Policy
from tests.guard.policy.conftest import World


def verdict_of(policy: Policy, world: World, tool: str, path: str) -> str:
    return policy.classify(tool, {"path": path}, world.project).verdict


@pytest.mark.parametrize(
    "path",
    [".env", "./.env", "src/../.env", "src//.././.env", "sub/.env.local", "a/b/c/.env.prod"],
)
def test_relative_paths_and_dotdot(world: World, path: str) -> None:
    verdict = world.policy().classify("read", {"path": path}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.action_kind == "protected"
    assert verdict.path == normalize_path(path, world.project)
    assert verdict.targets == (verdict.path,)


def test_absolute_paths_and_escapes_outside_the_project(world: World) -> None:
    policy = world.policy()
    assert verdict_of(policy, world, "read", str(world.project / ".env")) == "confirm"
    assert verdict_of(policy, world, "read", "../home/.ssh/config") == "confirm"
    assert verdict_of(policy, world, "write", "../elsewhere/.env") == "confirm"
    assert verdict_of(policy, world, "write", "~/.ssh/authorized_keys") == "block"
    assert verdict_of(policy, world, "read", "src/app.py") == "allow"
    assert verdict_of(policy, world, "read", "environment.md") == "allow"


def test_case_insensitive_by_default(world: World) -> None:
    policy = world.policy()
    assert verdict_of(policy, world, "read", ".ENV") == "confirm"
    assert verdict_of(policy, world, "read", "certs/Server.PEM") == "confirm"
    world.user_config("[settings]\ncase_sensitive_paths = true\n")
    strict = world.policy()
    assert verdict_of(strict, world, "read", ".ENV") == "allow"
    assert verdict_of(strict, world, "read", ".env") == "confirm"


def test_symlinks_are_followed_when_resolution_is_on(world: World) -> None:
    (world.project / ".env").write_text("SECRET=1\n")
    (world.project / "notes.txt").symlink_to(world.project / ".env")
    (world.project / "linkdir").symlink_to(world.home, target_is_directory=True)
    policy = world.policy()
    verdict = policy.classify("read", {"path": "notes.txt"}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.dotenv",)
    assert verdict.path == normalize_path("notes.txt", world.project)
    assert policy.classify("bash", {"command": "cat notes.txt"}, world.project).verdict == "confirm"
    # a file that does not exist yet, in a symlinked directory
    assert verdict_of(policy, world, "write", "linkdir/.ssh/new_key") == "block"
    assert verdict_of(policy, world, "write", "linkdir/notes.md") == "confirm"  # outside
    world.user_config("[settings]\nresolve_symlinks = false\n")
    lexical = world.policy()
    assert verdict_of(lexical, world, "read", "notes.txt") == "allow"
    assert verdict_of(lexical, world, "write", "linkdir/.ssh/new_key") == "allow"


def test_pi_path_quirks_at_prefix_and_unicode_spaces(world: World) -> None:
    policy = world.policy()
    verdict = policy.classify("read", {"path": "@.env"}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.path == normalize_path(".env", world.project)  # the file pi opens
    assert verdict_of(policy, world, "read", "@~/.ssh/id_rsa") == "confirm"


def test_globs_in_bash_are_expanded_against_the_file_system(world: World) -> None:
    (world.project / ".env").write_text("x")
    policy = world.policy()
    assert policy.classify("bash", {"command": "cat .e*"}, world.project).verdict == "confirm"
    assert policy.classify("bash", {"command": "cat '.e*'"}, world.project).verdict == "allow"


def test_guard_home_is_blocked_its_config_only_protected(world: World) -> None:
    policy = world.policy()
    home = world.guard_home
    for name in (
        "signing.key",
        "keyring.json",
        "ledger.sqlite3",
        "audit.jsonl",
        "audit.jsonl.head",
    ):
        for tool in ("read", "write", "edit"):
            verdict = policy.classify(tool, {"path": str(home / name)}, world.project)
            assert (verdict.verdict, verdict.action_kind) == ("block", "protected"), (tool, name)
    config = str(home / "operator-guard.toml")
    assert verdict_of(policy, world, "read", config) == "allow"
    assert verdict_of(policy, world, "write", config) == "block"
    assert verdict_of(policy, world, "edit", ".pi/operator-guard.toml") == "confirm"
    assert verdict_of(policy, world, "write", ".pi/extensions/operator-guard/index.ts") == "block"
    for module in ("ask.ts", "local.ts", "sidecar.ts", "wire.ts"):  # the modules index.ts imports
        for tool in ("write", "edit"):
            where = f".pi/extensions/operator-guard/{module}"
            assert verdict_of(policy, world, tool, where) == "block", (tool, module)
    # another extension of the project: code pi loads at its next start, never written
    assert verdict_of(policy, world, "write", ".pi/extensions/other/index.ts") == "block"
    assert verdict_of(policy, world, "ls", str(home.parent)) == "allow"


def test_guard_home_from_the_environment(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    custom = world.home / "elsewhere" / "guard"
    policy = Policy.load(custom, world.project)
    assert verdict_of(policy, world, "read", str(custom / "signing.key")) == "block"
    bash = policy.classify(
        "bash", {"command": f"cp -r {custom.parent} /var/scratch/x"}, world.project
    )
    assert bash.verdict == "block"


def test_pi_auth_file_follows_the_agent_dir(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = world.home / "agent-dir"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    policy = world.policy()
    verdict = policy.classify("read", {"path": str(agent / "auth.json")}, world.project)
    assert verdict.rule_ids == ("builtin.pi-auth",)
    assert verdict_of(policy, world, "read", "auth.json") == "allow"


def test_git_internals_protected_for_writes_only(world: World) -> None:
    policy = world.policy()
    assert verdict_of(policy, world, "read", ".git/config") == "allow"
    assert verdict_of(policy, world, "write", ".git/info/exclude") == "confirm"
    assert verdict_of(policy, world, "write", "vendor/lib/.git/HEAD") == "confirm"
    # what the operator's git runs later is never written by the agent
    assert verdict_of(policy, world, "write", ".git/hooks/pre-commit") == "block"
    assert verdict_of(policy, world, "edit", "vendor/lib/.git/config") == "block"
    assert verdict_of(policy, world, "write", ".gitignore") == "allow"


def test_custom_tools_with_a_path_count_as_read_and_write(world: World) -> None:
    policy = world.policy()
    assert verdict_of(policy, world, "my_uploader", ".git/HEAD") == "confirm"
    assert verdict_of(policy, world, "my_uploader", ".git/config") == "block"
    # Any other path of the workspace: it asks only as a tool the guard does not know.
    readme = policy.classify("my_uploader", {"path": "README.md"}, world.project)
    assert readme.rule_ids == ("builtin.unknown-tool",)


@pytest.mark.parametrize("bad", ["", 42, None, "a\x00b"])
def test_unusable_path_input_fails_closed(world: World, bad: object) -> None:
    verdict = world.policy().classify("write", {"path": bad}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.invalid-input",)
    assert verdict.path is None


def test_relative_project_globs_are_anchored_at_the_project(world: World) -> None:
    world.project_config(
        '[[rule]]\nid = "team.secrets"\nverdict = "confirm"\npaths = ["config/secrets/*.json"]\n'
    )
    policy = world.policy()
    assert verdict_of(policy, world, "read", "config/secrets/db.json") == "confirm"
    assert verdict_of(policy, world, "read", "config/secrets/deep/db.json") == "allow"
    assert verdict_of(policy, world, "read", "other/config/secrets/db.json") == "allow"
    outside = os.fspath(Path(world.project).parent / "config" / "secrets" / "x.json")
    assert verdict_of(policy, world, "read", outside) == "allow"


def test_bad_glob_is_a_problem(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.x"\nverdict = "confirm"\npaths = ["../up/*"]\n\n'
        '[[rule]]\nid = "me.y"\nverdict = "confirm"\npaths = ["${NOPE}/x"]\n'
    )
    problems = world.policy().problems
    assert [(p.line, p.key) for p in problems] == [(1, "rule me.x"), (6, "rule me.y")]
    assert "'..'" in problems[0].message
    assert "unknown placeholder" in problems[1].message


def test_grep_tool_over_a_directory_holding_the_guard_home_is_blocked(world: World) -> None:
    policy = world.policy()
    assert verdict_of(policy, world, "grep", str(world.home)) == "block"
    assert verdict_of(policy, world, "ls", str(world.home)) == "allow"
    assert verdict_of(policy, world, "grep", "src") == "allow"


def test_the_anchor_directory_is_off_limits_to_every_tool(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pi's file tools run outside the bash sandbox: a `write` over an anchored checkpoint
    # would let the agent invalidate it, and a later rollback would go unseen.
    anchors = world.home / "guard-anchors"
    kept = anchors / "log_x" / "000000000005.checkpoint"
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    policy = Policy.load(world.guard_home, world.project)
    for tool in ("read", "write", "edit"):
        for path in (str(kept), str(anchors), f"{anchors}/../guard-anchors/log_x/x.tree"):
            verdict = policy.classify(tool, {"path": path}, world.project)
            assert (verdict.verdict, verdict.action_kind) == ("block", "protected"), (tool, path)
            assert "builtin.guard-anchor" in verdict.rule_ids, (tool, path)
    for command in (f"cat {kept}", f"rm -rf {anchors}", f"cp /dev/null {kept}"):
        assert policy.classify("bash", {"command": command}, world.project).verdict == "block"
    # without the variable the same directory is an ordinary one
    monkeypatch.delenv("PI_OPERATOR_GUARD_ANCHOR_DIR")
    plain = Policy.load(world.guard_home, world.project)
    assert verdict_of(plain, world, "read", str(kept)) == "allow"
