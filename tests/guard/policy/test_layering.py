"""Layers: built-in < user < project, strictest wins, the project never relaxes."""

from __future__ import annotations

from pathlib import Path

from guard._policy import ConfigProblem, Policy, check_config_file
from tests.guard.policy.conftest import World


def classify(policy: Policy, world: World, command: str) -> tuple[str, tuple[str, ...]]:
    verdict = policy.classify("bash", {"command": command}, world.project)
    return verdict.verdict, verdict.rule_ids


def test_project_cannot_allow_rm_rf(world: World) -> None:
    path = world.project_config(
        '[[rule]]\nid = "team.rm-ok"\nverdict = "allow"\nprogram = "rm"\nrelaxes = ["builtin.rm"]\n'
    )
    policy = world.policy()
    assert classify(policy, world, "rm -rf build")[0] == "confirm"
    assert [str(p) for p in policy.problems] == [
        f"{path}:1: rule team.rm-ok: ignored: a project file can add restrictions but never "
        "relax the policy (the project directory is writable by the model)"
    ]
    ignored = policy.describe()["ignored"]
    assert [(i["id"], i["layer"]) for i in ignored] == [("team.rm-ok", "project")]


def test_project_cannot_unprotect_dotenv(world: World) -> None:
    world.project_config(
        "# trying to make .env readable again\n\n"
        '[[rule]]\nid = "builtin.dotenv"\nverdict = "allow"\npaths = [".env*"]\n'
        'relaxes = ["builtin.dotenv"]\n\n'
        '[[rule]]\nid = "team.env-ok"\nverdict = "allow"\npaths = [".env"]\n'
        'relaxes = ["builtin.dotenv"]\n\n'
        "[settings]\ncase_sensitive_paths = true\nresolve_symlinks = false\n"
    )
    policy = world.policy()
    verdict = policy.classify("read", {"path": ".env"}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.dotenv",)
    assert policy.classify("read", {"path": ".ENV"}, world.project).verdict == "confirm"
    keys = sorted((p.line, p.key) for p in policy.problems)
    assert keys == [
        (3, "rule builtin.dotenv"),
        (9, "rule team.env-ok"),
        (16, "settings.case_sensitive_paths"),
        (17, "settings.resolve_symlinks"),
    ]
    assert any("problem(s)" in reason for reason in verdict.reasons)


def test_project_adds_restrictions(world: World) -> None:
    world.project_config(
        '[[rule]]\nid = "team.kubectl-apply"\nverdict = "confirm"\nprogram = "kubectl"\n'
        'subcommand = ["apply"]\nreason = "changes the shared cluster"\n\n'
        '[[rule]]\nid = "team.no-prod-secrets"\nverdict = "block"\npaths = ["secrets/prod"]\n\n'
        '[[rule]]\nid = "team.rm-block"\nverdict = "block"\nprogram = "rm"\n'
        'target_paths = ["vendor/**"]\n'
    )
    policy = world.policy()
    assert policy.problems == ()
    assert classify(policy, world, "kubectl apply -f k8s/") == ("confirm", ("team.kubectl-apply",))
    assert classify(policy, world, "kubectl get pods") == ("allow", ())
    verdict = policy.classify("read", {"path": "secrets/prod/db.txt"}, world.project)
    assert (verdict.verdict, verdict.action_kind) == ("block", "protected")
    # strictest wins: the built-in confirm and the project block on the same command
    assert classify(policy, world, "rm -rf vendor/lib") == (
        "block",
        ("team.rm-block", "builtin.rm"),
    )
    assert classify(policy, world, "rm -rf build")[0] == "confirm"
    layers = {r["id"]: r["layer"] for r in policy.describe()["rules"]}
    assert layers["team.kubectl-apply"] == "project"
    assert layers["builtin.rm"] == "builtin"


def test_user_may_relax_a_builtin_confirm_rule_explicitly(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.rm-build"\nverdict = "allow"\nprogram = ["rm"]\n'
        'target_paths = ["build", "dist"]\nrelaxes = ["builtin.rm"]\n'
    )
    policy = world.policy()
    assert policy.problems == ()
    verdict = policy.classify("bash", {"command": "rm -rf build dist"}, world.project)
    assert verdict.verdict == "allow"
    assert verdict.rule_ids == ("me.rm-build",)
    assert verdict.reasons == ("builtin.rm relaxed by the user's rule me.rm-build",)
    # every target must be covered, and other rules still apply
    assert classify(policy, world, "rm -rf build src")[0] == "confirm"
    assert classify(policy, world, "rm -rf build/.env") == (
        "confirm",
        ("builtin.dotenv", "me.rm-build"),
    )
    # and a project block still wins over the user's exception
    world.project_config(
        '[[rule]]\nid = "team.keep-dist"\nverdict = "block"\nprogram = "rm"\n'
        'target_paths = ["dist"]\n'
    )
    assert classify(world.policy(), world, "rm -rf dist")[0] == "block"


def test_user_cannot_relax_block_rules(world: World) -> None:
    path = world.user_config(
        '[[rule]]\nid = "me.key"\nverdict = "allow"\npaths = ["${GUARD_HOME}"]\n'
        'relaxes = ["builtin.guard-home", "builtin.catastrophic-target"]\n'
    )
    policy = world.policy()
    problem = policy.problems[0]
    assert (problem.file, problem.line, problem.key) == (str(path), 1, "rule me.key")
    assert "builtin.guard-home" in problem.message
    verdict = policy.classify(
        "read", {"path": str(world.guard_home / "signing.key")}, world.project
    )
    assert verdict.verdict == "block"


def test_user_relaxing_settings_is_honoured_project_tightening_too(world: World) -> None:
    world.user_config("[settings]\ncase_sensitive_paths = true\n")
    policy = world.policy()
    assert policy.problems == ()
    assert policy.classify("read", {"path": ".ENV"}, world.project).verdict == "allow"
    world.project_config("[settings]\ncase_sensitive_paths = false\nshell_tools = ['sh']\n")
    policy = world.policy()
    assert policy.problems == ()
    assert policy.classify("read", {"path": ".ENV"}, world.project).verdict == "confirm"
    assert policy.classify("sh", {"command": "rm x"}, world.project).verdict == "confirm"
    assert policy.classify("bash", {"command": "rm x"}, world.project).verdict == "confirm"
    described = policy.describe()
    assert described["settingsFrom"]["caseSensitivePaths"] == "project"
    assert described["settings"]["shellTools"] == ["bash", "sh"]


def test_invalid_toml_names_the_line_and_falls_back(world: World) -> None:
    path = world.user_config('[[rule]]\nid = "me.x"\nverdict = "confirm\nprogram = "x"\n')
    policy = world.policy()
    # Besides the syntax error: grants are off and the sandbox's network is off, since what
    # the file says of them is unknown.
    problem, network_off, grants_off = policy.problems
    assert (grants_off.file, grants_off.key) == (str(path), "grants")
    assert (network_off.key, "network off" in network_off.message) == ("sandbox", True)
    assert problem.file == str(path)
    assert problem.line == 3
    assert problem.key == "(syntax)"
    assert str(problem).startswith(f"{path}:3: (syntax): not valid TOML")
    assert classify(policy, world, "rm -rf build")[0] == "confirm"
    layers = {layer["layer"]: layer["status"] for layer in policy.describe()["layers"]}
    assert layers == {"builtin": "loaded", "user": "invalid", "project": "absent"}


def test_invalid_rule_keeps_the_other_restrictions_but_no_relaxation(world: World) -> None:
    path = world.user_config(
        '[[rule]]\nid = "me.kubectl"\nverdict = "confirm"\nprogram = "kubectl"\n\n'
        '[[rule]]\nid = "me.bad"\nverdict = "confirm"\nprogam = "helm"\n\n'
        '[[rule]]\nid = "me.rm"\nverdict = "allow"\nprogram = "rm"\nrelaxes = ["builtin.rm"]\n\n'
        '[[rule]]\nid = "Bad Id"\nverdict = "maybe"\nprogram = "x"\n'
    )
    policy = world.policy()
    found = {(p.line, p.key) for p in policy.problems}
    assert (9, "rule[1].progam") in found
    assert (18, "rule[3].id") in found
    assert (19, "rule[3].verdict") in found
    assert (11, "rule me.rm") in found
    assert all(p.file == str(path) for p in policy.problems)
    assert classify(policy, world, "kubectl get pods")[0] == "confirm"
    assert classify(policy, world, "rm x")[0] == "confirm"
    layers = {layer["layer"]: layer["status"] for layer in policy.describe()["layers"]}
    assert layers["user"] == "partial"


def test_duplicate_and_reserved_ids_are_reported(world: World) -> None:
    world.user_config('[[rule]]\nid = "shared.id"\nverdict = "confirm"\ntools = ["deploy"]\n')
    world.project_config(
        '[[rule]]\nid = "shared.id"\nverdict = "confirm"\ntools = ["other"]\n\n'
        '[[rule]]\nid = "builtin.rm"\nverdict = "confirm"\nprogram = "rmx"\n'
    )
    policy = world.policy()
    messages = sorted(p.message.split(":")[0] + ":" + p.key for p in policy.problems)
    assert messages == ["ignored:rule builtin.rm", "ignored:rule shared.id"]
    assert policy.classify("deploy", {}, world.project).verdict == "confirm"
    # The project's rule for "other" was refused: it asks only as a tool the guard does not know.
    assert policy.classify("other", {}, world.project).rule_ids == ("builtin.unknown-tool",)


def test_tool_rules_name_custom_tools(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.deploy"\nverdict = "confirm"\ntools = ["deploy_*"]\n'
        'reason = "deploys"\n'
    )
    policy = world.policy()
    verdict = policy.classify("deploy_prod", {"env": "prod"}, world.project)
    assert (verdict.verdict, verdict.action_kind, verdict.rule_ids) == (
        "confirm",
        "destructive",
        ("builtin.unknown-tool", "me.deploy"),
    )
    unknown = policy.classify("unknown_tool", {"x": 1}, world.project)
    assert (unknown.verdict, unknown.rule_ids) == ("confirm", ("builtin.unknown-tool",))


def test_check_config_file(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[[rule]]\nid = "a.b"\nverdict = "block"\nprogram = ["x"]\n')
    assert check_config_file(good) == ()
    bad = tmp_path / "bad.toml"
    bad.write_text('version = 2\n\n[settings]\nresolve_symlinks = "yes"\n')
    problems = check_config_file(bad)
    assert [(p.line, p.key) for p in problems] == [
        (1, "version"),
        (4, "settings.resolve_symlinks"),
    ]
    assert all(isinstance(p, ConfigProblem) for p in problems)
    missing = check_config_file(tmp_path / "nope.toml")
    assert missing[0].message == "no such file"
    pi_dir = tmp_path / ".pi"
    pi_dir.mkdir()
    project = pi_dir / "operator-guard.toml"
    project.write_text(
        '[[rule]]\nid = "a.b"\nverdict = "allow"\ntools = ["x"]\nrelaxes = ["builtin.rm"]\n'
    )
    (problem,) = check_config_file(project)
    assert "never relax" in problem.message
    assert check_config_file(project, layer="user") == ()


def test_unreadable_config_is_a_problem_not_a_crash(world: World) -> None:
    world.guard_home.mkdir(parents=True)
    (world.guard_home / "operator-guard.toml").mkdir()  # a directory: cannot be read
    policy = world.policy()
    assert policy.problems[0].key == "(file)"
    assert policy.classify("bash", {"command": "ls"}, world.project).verdict == "allow"


def test_user_can_relax_a_fail_closed_check_for_a_tool(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.eval-ok"\nverdict = "allow"\ntools = ["bash"]\n'
        'relaxes = ["builtin.eval"]\n'
    )
    policy = world.policy()
    assert classify(policy, world, 'eval "$(ssh-agent -s)"') == ("allow", ("me.eval-ok",))
    # what the evaluated string does is still checked
    assert classify(policy, world, "eval 'rm -rf build'")[1] == ("builtin.rm", "me.eval-ok")
