"""Classification of one tool call: which rules fire, and the verdict, kind, reasons and targets.

A :class:`Classifier` is built here from a few compiled rules (no built-in layer in the way),
so each test shows exactly which rule fired for which command shape, file tool or tool name,
how the user's exceptions relax built-in rules, and how the strictest match wins.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from guard._errors import BadInputError
from guard._policy.matching.classify import Classifier, pi_tool_path
from guard._policy.matching.rules import CompiledRule, compile_rule
from guard._policy.settings.models import LayerName, Rule, Settings, Verdict


def compiled(
    layer: LayerName = "builtin", *, case_sensitive: bool = True, **fields: Any
) -> CompiledRule:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    fields.setdefault("verdict", "confirm")
    return compile_rule(
        Rule(**fields),
        layer,
        values={},
        home=os.path.expanduser("~"),
        anchor=None,
        case_sensitive=case_sensitive,
    )


class Calls:
    """A classifier over the given rules, classifying calls in ``cwd``."""

    def __init__(
        self,
        cwd: Path,
        rules: list[CompiledRule],
        exceptions: list[CompiledRule] | None = None,
        *,
        problems: int = 0,
        resolve: bool = True,
        shell_tools: tuple[str, ...] = ("bash",),
        case_sensitive: bool = True,
    ) -> None:
        self.cwd = cwd
        self.classifier = Classifier(
            rules=rules,
            exceptions=exceptions or [],
            settings=Settings(
                resolve_symlinks=resolve,
                case_sensitive_paths=case_sensitive,
                shell_tools=shell_tools,
            ),
            problem_count=problems,
        )

    def bash(self, command: str, tool: str = "bash") -> Verdict:
        return self.classifier.classify(tool, {"command": command}, self.cwd)

    def tool(self, tool: str, **tool_input: Any) -> Verdict:
        return self.classifier.classify(tool, tool_input, self.cwd)


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


# -- input shapes ------------------------------------------------------------------------------


def test_tool_input_must_be_an_object(cwd: Path) -> None:
    calls = Calls(cwd, [])
    with pytest.raises(BadInputError) as caught:
        calls.classifier.classify("bash", ["rm -rf /"], cwd)  # type: ignore[arg-type]
    assert (caught.value.what, caught.value.problem) == ("tool input", "must be a JSON object")
    assert caught.value.value == "list"
    assert str(caught.value) == "tool input: must be a JSON object (got list)"


def test_a_shell_call_without_a_command_string_asks(cwd: Path) -> None:
    verdict = Calls(cwd, []).tool("bash", command=["rm", "-rf", "x"])
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.invalid-input",)
    assert verdict.reasons == ("a shell call without a command string",)
    assert verdict.action_kind == "protected"


def test_only_configured_shell_tools_are_parsed_as_bash(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"], reason="deletes files")
    calls = Calls(cwd, [rm], shell_tools=("bash", "zsh-run"))
    assert calls.bash("rm x", tool="zsh-run").rule_ids == ("builtin.rm",)
    # Another tool's "command" is not read as bash by a rule of the shell: it asks as a tool
    # the guard does not know (and any shell its input names is judged as well).
    assert calls.bash("rm x", tool="other").rule_ids == ("builtin.unknown-tool", "builtin.rm")
    assert calls.bash("ls x").verdict == "allow"


def test_a_clean_call_is_allowed_as_local_safe(cwd: Path) -> None:
    verdict = Calls(cwd, [compiled(id="builtin.rm", program=["rm"])]).bash("ls -la")
    assert verdict == Verdict(verdict="allow", action_kind="local-safe")


def test_an_unusable_path_asks_and_shows_it(cwd: Path) -> None:
    calls = Calls(cwd, [])
    for raw, shown in [("", "''"), (7, "7"), ("a\x00b", "'a\\x00b'")]:
        verdict = calls.tool("write", path=raw, content="x")
        assert verdict.rule_ids == ("builtin.invalid-input",)
        assert verdict.reasons == (f"the path input is not usable: {shown}",)
        assert verdict.verdict == "confirm"
        assert verdict.path is None
        assert verdict.targets == ()


def test_a_non_search_tool_without_a_path_is_only_checked_by_tool_rules(cwd: Path) -> None:
    calls = Calls(cwd, [compiled(id="builtin.everything", paths=["**"])])
    assert calls.tool("read", file="x").verdict == "allow"
    assert calls.tool("webfetch", url="x").rule_ids == ("builtin.unknown-tool",)


# -- file tools --------------------------------------------------------------------------------


def dotenv(access: list[str] | None = None) -> CompiledRule:
    fields: dict[str, Any] = {"id": "builtin.dotenv", "paths": ["**/.env*"], "reason": "secrets"}
    if access is not None:
        fields["access"] = access
    return compiled(**fields)


def test_read_of_a_protected_file(cwd: Path) -> None:
    verdict = Calls(cwd, [dotenv()]).tool("read", path=".env")
    env = str(cwd / ".env")
    assert verdict == Verdict(
        verdict="confirm",
        action_kind="protected",
        rule_ids=("builtin.dotenv",),
        reasons=(f"secrets: {env}",),
        targets=(env,),
        path=env,
    )


def test_pi_file_tools_read_or_write_by_name(cwd: Path) -> None:
    reads = Calls(cwd, [dotenv(["read"])])
    writes = Calls(cwd, [dotenv(["write"])])
    for tool in ("read", "grep", "find", "ls"):
        assert reads.tool(tool, path=".env").verdict == "confirm", tool
        assert writes.tool(tool, path=".env").verdict == "allow", tool
    for tool in ("write", "edit"):
        assert reads.tool(tool, path=".env").verdict == "allow", tool
        assert writes.tool(tool, path=".env").verdict == "confirm", tool
    # any other tool with a path may do both
    assert reads.tool("custom", path=".env").verdict == "confirm"
    assert writes.tool("custom", path=".env").verdict == "confirm"


def test_the_allowed_path_is_still_reported_for_the_fingerprint(cwd: Path) -> None:
    verdict = Calls(cwd, [dotenv()]).tool("write", path="src/a.py", content="")
    assert verdict.verdict == "allow"
    assert verdict.path == str(cwd / "src/a.py")
    assert verdict.targets == (str(cwd / "src/a.py"),)


def test_pi_tools_strip_one_at_and_unicode_spaces(cwd: Path) -> None:
    calls = Calls(cwd, [dotenv()])
    verdict = calls.tool("read", path="@.env")
    assert verdict.verdict == "confirm"
    assert verdict.path == str(cwd / ".env")
    assert calls.tool("read", path="@@.env").verdict == "allow"
    spaced = Calls(cwd, [compiled(id="builtin.x", paths=["**/my file"])])
    assert spaced.tool("read", path="my\u00a0file").path == str(cwd / "my file")
    assert spaced.tool("read", path="my\u00a0file").verdict == "confirm"


def test_pi_tool_path() -> None:
    assert pi_tool_path("@") == "."
    assert pi_tool_path("") == "."
    assert pi_tool_path("@a\u2003b\u3000c") == "a b c"
    assert pi_tool_path("a@b") == "a@b"
    assert pi_tool_path("@@x") == "@x"


def test_another_tool_is_checked_on_every_reading_of_its_path(cwd: Path) -> None:
    calls = Calls(cwd, [dotenv()])
    verdict = calls.tool("custom", path="@.env")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.unknown-tool", "builtin.dotenv")
    assert verdict.path == str(cwd / "@.env")
    assert verdict.targets == (str(cwd / "@.env"), str(cwd / ".env"))
    spaced = Calls(cwd, [compiled(id="builtin.x", paths=["**/a b"])])
    both = spaced.tool("custom", path="@a\u00a0b")
    assert both.verdict == "confirm"
    assert both.targets == (str(cwd / "@a\u00a0b"), str(cwd / "a b"))
    plain = spaced.tool("custom", path="a\u00a0b")
    assert plain.targets == (str(cwd / "a\u00a0b"), str(cwd / "a b"))
    assert calls.tool("custom", path="@").rule_ids == ("builtin.unknown-tool",)
    # a relative path is also judged from the home (a server rooted there reads it there)
    home_env = os.path.join(os.path.expanduser("~"), ".env")
    assert calls.tool("custom", path=".env").targets == (str(cwd / ".env"), home_env)


def test_search_tools_without_a_path_search_the_workspace(cwd: Path) -> None:
    calls = Calls(cwd, [compiled(id="builtin.project", paths=[str(cwd)], verdict="block")])
    for tool in ("grep", "find", "ls"):
        for tool_input in ({}, {"path": None}):
            verdict = calls.tool(tool, **tool_input)
            assert verdict.verdict == "block", (tool, tool_input)
            assert verdict.path == str(cwd)
    assert calls.tool("read").verdict == "allow"
    unusable = calls.tool("read", path=None)
    assert unusable.rule_ids == ("builtin.invalid-input",)
    assert unusable.reasons == ("the path input is not usable: None",)


def test_grep_searches_beneath_its_path_for_block_rules(cwd: Path) -> None:
    guard = cwd / "guard"
    calls = Calls(cwd, [compiled(id="builtin.guard-home", paths=[str(guard)], verdict="block")])
    assert calls.tool("grep", path=".", pattern="x").verdict == "block"
    assert calls.tool("read", path=".").verdict == "allow"
    assert calls.tool("ls", path=".").verdict == "allow"


def test_search_globs_are_checked_as_patterns(cwd: Path) -> None:
    calls = Calls(cwd, [dotenv()])
    hit = calls.tool("grep", pattern="x", glob=".env*")
    assert hit.verdict == "confirm"
    assert hit.rule_ids == ("builtin.dotenv",)
    assert hit.targets == (str(cwd), f"{cwd}/**/.env*")
    assert calls.tool("find", pattern=".e{nv,x}").verdict == "confirm"
    assert calls.tool("find", pattern="/sub/.env").verdict == "confirm"
    assert calls.tool("find", path="sub", pattern="x/.env").targets == (
        str(cwd / "sub"),
        f"{cwd}/sub/x/.env",
    )
    assert calls.tool("find", pattern="*.py").verdict == "allow"
    assert calls.tool("grep", pattern=".env*").verdict == "allow"  # the regex, not a glob
    assert calls.tool("ls", pattern=".env*").verdict == "allow"
    assert calls.tool("grep", pattern="x", glob="").verdict == "allow"
    assert calls.tool("grep", pattern="x", glob=7).verdict == "allow"


def test_grep_globs_select_file_contents_beneath_block_rules(cwd: Path) -> None:
    rule = compiled(id="builtin.guard-home", paths=[str(cwd / "guard")], verdict="block")
    calls = Calls(cwd, [rule])
    assert calls.tool("grep", path="/", pattern="x", glob="gu*").verdict == "block"


def test_symlinks_are_followed_only_when_resolving(cwd: Path) -> None:
    (cwd / "secrets").mkdir()
    (cwd / "secrets" / "k").write_text("x")
    (cwd / "link").symlink_to(cwd / "secrets" / "k")
    rule = compiled(id="builtin.s", paths=[str(cwd / "secrets/**")])
    verdict = Calls(cwd, [rule]).tool("read", path="link")
    assert verdict.verdict == "confirm"
    assert verdict.targets == (str(cwd / "link"),)
    assert Calls(cwd, [rule], resolve=False).tool("read", path="link").verdict == "allow"
    assert Calls(cwd, [rule]).bash("cat link").verdict == "confirm"
    assert Calls(cwd, [rule]).bash("cat link link").rule_ids == ("builtin.s",)


def test_path_rules_scoped_to_tools(cwd: Path) -> None:
    rule = compiled(id="builtin.d", paths=["**/.env"], tools=["write"])
    calls = Calls(cwd, [rule])
    assert calls.tool("write", path=".env", content="").verdict == "confirm"
    assert calls.tool("read", path=".env").verdict == "allow"


def test_each_path_rule_that_covers_a_path_fires(cwd: Path) -> None:
    a = compiled(id="builtin.a", paths=["**/.env"])
    b = compiled(id="builtin.b", paths=["**/.e*"])
    c = compiled(id="builtin.c", paths=["**/other"])
    assert Calls(cwd, [a, c, b]).tool("read", path=".env").rule_ids == ("builtin.a", "builtin.b")


# -- tool rules --------------------------------------------------------------------------------


def test_tool_rules_fire_on_their_tool_names(cwd: Path) -> None:
    rule = compiled(id="user.web", layer="user", tools=["web*"], verdict="block", reason="no web")
    calls = Calls(cwd, [rule])
    verdict = calls.tool("webfetch", url="https://x")
    assert verdict.verdict == "block"
    assert verdict.rule_ids == ("user.web", "builtin.unknown-tool")
    assert verdict.reasons[0] == "no web"
    assert verdict.action_kind == "destructive"
    assert calls.tool("read", path="x").verdict == "allow"


def test_a_rule_without_a_reason_names_itself(cwd: Path) -> None:
    rule = compiled(id="user.web", layer="user", tools=["webfetch"])
    assert "matches rule user.web" in Calls(cwd, [rule]).tool("webfetch").reasons


# -- command shapes ----------------------------------------------------------------------------


def test_program_rules_fire_with_their_targets(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"], reason="deletes files")
    verdict = Calls(cwd, [rm]).bash("rm -f a b")
    assert verdict == Verdict(
        verdict="confirm",
        action_kind="destructive",
        rule_ids=("builtin.rm",),
        reasons=(f"deletes files: {cwd / 'a'}, {cwd / 'b'}",),
        targets=(str(cwd / "a"), str(cwd / "b")),
    )


def test_program_rules_scoped_to_tools(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"], tools=["bash"])
    calls = Calls(cwd, [rm], shell_tools=("bash", "sh"))
    assert calls.bash("rm x").verdict == "confirm"
    assert calls.bash("rm x", tool="sh").verdict == "allow"


def test_every_command_of_a_script_is_checked(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    dd = compiled(id="builtin.dd", program=["dd"])
    verdict = Calls(cwd, [rm, dd]).bash("ls; dd if=x of=y && rm z")
    assert set(verdict.rule_ids) == {"builtin.rm", "builtin.dd"}


def test_subcommand_rules_are_found_by_their_first_word(cwd: Path) -> None:
    reset = compiled(id="builtin.reset", program=["git"], subcommand=["reset|restore"])
    push = compiled(id="builtin.push", program=["git"], subcommand=["push"])
    anygit = compiled(id="builtin.git", program=["git"], args=["--danger"])
    calls = Calls(cwd, [reset, push, anygit])
    assert calls.bash("git reset x").rule_ids == ("builtin.reset",)
    assert calls.bash("git restore x").rule_ids == ("builtin.reset",)
    assert calls.bash("git push").rule_ids == ("builtin.push",)
    assert calls.bash("git status").verdict == "allow"
    assert calls.bash("git push --danger").rule_ids == ("builtin.git", "builtin.push")
    assert calls.bash("git -C repo push").rule_ids == ("builtin.push",)


def test_a_subcommand_after_an_unknown_option_is_still_found(cwd: Path) -> None:
    push = compiled(id="builtin.push", program=["git"], subcommand=["push"])
    reset = compiled(id="builtin.reset", program=["git"], subcommand=["reset"])
    calls = Calls(cwd, [push, reset])
    assert calls.bash("git --weird push").rule_ids == ("builtin.push",)
    assert calls.bash("git --weird reset").rule_ids == ("builtin.reset",)
    assert calls.bash("git --weird a b push").verdict == "allow"
    assert calls.bash("git --weird status push").rule_ids == ("builtin.push",)


def test_a_runtime_subcommand_could_be_any_of_them(cwd: Path) -> None:
    push = compiled(id="builtin.push", program=["git"], subcommand=["push"])
    reset = compiled(id="builtin.reset", program=["git", "hub"], subcommand=["reset"])
    other = compiled(id="builtin.other", program=["hub"], subcommand=["push"])
    verdict = Calls(cwd, [push, reset, other]).bash("git $SUB")
    assert "builtin.push" in verdict.rule_ids
    assert "builtin.reset" in verdict.rule_ids
    assert "builtin.other" not in verdict.rule_ids
    assert verdict.rule_ids.count("builtin.reset") == 1
    late = Calls(cwd, [push, reset]).bash("git --weird $SUB")
    assert {"builtin.push", "builtin.reset"} <= set(late.rule_ids)


def test_a_rule_for_several_programs_and_subcommands_fires_once(cwd: Path) -> None:
    rule = compiled(id="builtin.del", program=["kubectl", "oc"], subcommand=["delete|rm"])
    calls = Calls(cwd, [rule])
    assert calls.bash("oc delete pod x").rule_ids == ("builtin.del",)
    assert calls.bash("kubectl rm pod x").rule_ids == ("builtin.del",)
    assert calls.bash("kubectl --weird delete pod").rule_ids == ("builtin.del",)


def test_globbed_programs_and_subcommands(cwd: Path) -> None:
    mkfs = compiled(id="builtin.mkfs", program=["mkfs.*", "newfs?"])
    dd = compiled(id="builtin.dd", program=["dd"])
    sub = compiled(id="builtin.sub", program=["tool"], subcommand=["de*"])
    calls = Calls(cwd, [mkfs, dd, sub])
    assert calls.bash("mkfs.ext4 /dev/x").rule_ids == ("builtin.mkfs",)
    assert calls.bash("newfsx y").rule_ids == ("builtin.mkfs",)
    assert calls.bash("mkfs /dev/x").verdict == "allow"
    assert calls.bash("dd x").rule_ids == ("builtin.dd",)
    assert calls.bash("tool delete").rule_ids == ("builtin.sub",)
    assert calls.bash("tool list").verdict == "allow"
    bracket = Calls(cwd, [compiled(id="builtin.b", program=["[m]kfs"])])
    assert bracket.bash("mkfs x").rule_ids == ("builtin.b",)


def test_a_globbed_program_rule_only_fires_for_its_own_programs(cwd: Path) -> None:
    one = compiled(id="builtin.one", program=["foo*"], subcommand=["uninstall"])
    two = compiled(id="builtin.two", program=["bar*"])
    calls = Calls(cwd, [one, two])
    assert calls.bash("barx y").rule_ids == ("builtin.two",)
    assert calls.bash("foo3 uninstall x").rule_ids == ("builtin.one",)
    assert calls.bash("foo3 install x").verdict == "allow"


def test_catastrophic_targets_are_checked_on_commands(cwd: Path) -> None:
    verdict = Calls(cwd, []).bash("rm -rf /")
    assert verdict.verdict == "block"
    assert verdict.rule_ids == ("builtin.catastrophic-target",)


def test_shell_commands_reach_path_rules(cwd: Path) -> None:
    verdict = Calls(cwd, [dotenv()]).bash("cat .env")
    assert verdict.rule_ids == ("builtin.dotenv",)
    assert verdict.path is None


# -- exceptions --------------------------------------------------------------------------------


def test_a_user_exception_relaxes_a_builtin_command_rule_for_its_targets(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    ok = compiled(
        id="user.rm-build",
        layer="user",
        verdict="allow",
        program=["rm"],
        target_paths=[str(cwd / "build/**")],
        relaxes=["builtin.rm"],
    )
    calls = Calls(cwd, [rm], [ok])
    verdict = calls.bash("rm -rf build/x")
    assert verdict == Verdict(
        verdict="allow",
        action_kind="local-safe",
        rule_ids=("user.rm-build",),
        reasons=("builtin.rm relaxed by the user's rule user.rm-build",),
        targets=(str(cwd / "build/x"),),  # what the rule let through: the effects review's too
    )
    assert calls.bash("rm -rf build/x src").rule_ids == ("builtin.rm",)
    assert calls.bash("rm -rf build/x; rm src").rule_ids == ("builtin.rm", "user.rm-build")


def test_an_exception_only_relaxes_the_rules_it_names(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    ok = compiled(
        id="user.other", layer="user", verdict="allow", program=["rm"], relaxes=["builtin.dd"]
    )
    assert Calls(cwd, [rm], [ok]).bash("rm x").rule_ids == ("builtin.rm",)


def test_an_exception_never_relaxes_a_block_or_a_non_builtin_rule(cwd: Path) -> None:
    block = compiled(id="builtin.rm", program=["rm"], verdict="block")
    user = compiled(id="builtin.rm", layer="user", program=["rm"])
    ok = compiled(
        id="user.rm", layer="user", verdict="allow", program=["rm"], relaxes=["builtin.rm"]
    )
    assert Calls(cwd, [block], [ok]).bash("rm x").verdict == "block"
    assert Calls(cwd, [user], [ok]).bash("rm x").verdict == "confirm"


def test_a_tool_scoped_exception_relaxes_only_for_its_tools(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    ok = compiled(
        id="user.rm",
        layer="user",
        verdict="allow",
        program=["rm"],
        tools=["sh"],
        relaxes=["builtin.rm"],
    )
    calls = Calls(cwd, [rm], [ok], shell_tools=("bash", "sh"))
    assert calls.bash("rm x", tool="sh").verdict == "allow"
    assert calls.bash("rm x").verdict == "confirm"


def test_a_program_exception_needs_its_own_shape(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm", "unlink"])
    ok = compiled(
        id="user.rm", layer="user", verdict="allow", program=["rm"], relaxes=["builtin.rm"]
    )
    calls = Calls(cwd, [rm], [ok])
    assert calls.bash("rm x").verdict == "allow"
    assert calls.bash("unlink x").verdict == "confirm"


def test_a_command_exception_does_not_relax_a_tool_rule(cwd: Path) -> None:
    web = compiled(id="builtin.web", tools=["webfetch"])
    ok = compiled(
        id="user.web", layer="user", verdict="allow", program=["curl"], relaxes=["builtin.web"]
    )
    assert Calls(cwd, [web], [ok]).tool("webfetch").verdict == "confirm"


def test_a_tool_exception_relaxes_a_tool_rule_for_its_tools(cwd: Path) -> None:
    web = compiled(id="builtin.web", tools=["web*"])
    ok = compiled(id="user.web", layer="user", verdict="allow", tools=["webfetch"], relaxes=["builtin.web", "builtin.unknown-tool"])  # fmt: skip
    calls = Calls(cwd, [web], [ok])
    verdict = calls.tool("webfetch")
    assert verdict.verdict == "allow"
    assert verdict.rule_ids == ("user.web",)
    assert calls.tool("websearch").verdict == "confirm"


def test_a_path_exception_relaxes_when_it_covers_every_hit(cwd: Path) -> None:
    ok = compiled(
        id="user.env-example",
        layer="user",
        verdict="allow",
        paths=["**/.env.example"],
        relaxes=["builtin.dotenv"],
    )
    calls = Calls(cwd, [dotenv()], [ok])
    verdict = calls.tool("read", path=".env.example")
    assert verdict.verdict == "allow"
    assert verdict.rule_ids == ("user.env-example",)
    assert calls.tool("read", path=".env").verdict == "confirm"
    assert calls.bash("cat .env.example .env").verdict == "confirm"
    assert calls.bash("cat .env.example").verdict == "allow"
    # a glob hit has no path the exception could vouch for
    assert calls.tool("grep", pattern="x", glob=".env*").verdict == "confirm"


def test_a_path_exception_scoped_to_tools(cwd: Path) -> None:
    ok = compiled(
        id="user.env",
        layer="user",
        verdict="allow",
        paths=["**/.env"],
        tools=["read"],
        relaxes=["builtin.dotenv"],
    )
    calls = Calls(cwd, [dotenv()], [ok])
    assert calls.tool("read", path=".env").verdict == "allow"
    assert calls.tool("write", path=".env", content="").verdict == "confirm"


def test_a_program_exception_does_not_relax_a_path_rule(cwd: Path) -> None:
    ok = compiled(
        id="user.cat", layer="user", verdict="allow", program=["cat"], relaxes=["builtin.dotenv"]
    )
    calls = Calls(cwd, [dotenv()], [ok])
    assert calls.tool("read", path=".env").verdict == "confirm"
    assert calls.bash("cat .env").verdict == "allow"


# -- the verdict -------------------------------------------------------------------------------


def test_the_strictest_match_wins_and_leads(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"], reason="deletes")
    env = compiled(id="builtin.env", paths=["**/.env"], verdict="block", reason="secret")
    verdict = Calls(cwd, [rm, env]).bash("rm .env")
    path = str(cwd / ".env")
    assert verdict == Verdict(
        verdict="block",
        action_kind="protected",
        rule_ids=("builtin.env", "builtin.rm"),
        reasons=(f"secret: {path}", f"deletes: {path}"),
        targets=(path,),
    )


def test_destructive_wins_among_the_leading_matches(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    env = compiled(id="builtin.env", paths=["**/.env"])
    verdict = Calls(cwd, [rm, env]).bash("rm .env")
    assert verdict.verdict == "confirm"
    assert verdict.action_kind == "destructive"
    protected = compiled(id="builtin.rm", program=["rm"], kind="protected")
    assert Calls(cwd, [protected, env]).bash("rm .env").action_kind == "protected"
    # a destructive match below the top rank does not count
    block_env = compiled(id="builtin.env", paths=["**/.env"], verdict="block")
    assert Calls(cwd, [rm, block_env]).bash("rm .env").action_kind == "protected"


def test_config_problems_are_noted(cwd: Path) -> None:
    note = (
        "policy config has 2 problem(s); running on the built-in rules plus what is valid "
        "in the other layers (see `pi-guard policy show`)"
    )
    calls = Calls(cwd, [compiled(id="builtin.rm", program=["rm"], reason="r")], problems=2)
    assert calls.bash("ls").reasons == (note,)
    assert calls.bash("rm").reasons == ("r", note)
    assert Calls(cwd, []).bash("ls").reasons == ()


def test_relaxed_and_active_matches_together(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"], reason="r")
    dd = compiled(id="builtin.dd", program=["dd"], reason="d")
    ok = compiled(
        id="user.rm", layer="user", verdict="allow", program=["rm"], relaxes=["builtin.rm"]
    )
    verdict = Calls(cwd, [rm, dd], [ok]).bash("rm; dd")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.dd", "user.rm")
    assert verdict.reasons == ("d", "builtin.rm relaxed by the user's rule user.rm")


# -- pre-filters that must not hide a hit ------------------------------------------------------


def test_case_insensitive_paths_reach_the_rules(cwd: Path) -> None:
    rule = compiled(id="builtin.dotenv", paths=["**/.env"], case_sensitive=False)
    calls = Calls(cwd, [rule], case_sensitive=False)
    assert calls.tool("read", path=".ENV").rule_ids == ("builtin.dotenv",)
    assert calls.bash("cat .Env").rule_ids == ("builtin.dotenv",)


def test_a_recursive_command_on_a_parent_of_a_blocked_root_is_blocked(cwd: Path) -> None:
    guard = str(cwd / "guard")
    block = compiled(id="builtin.guard-home", paths=[guard], verdict="block")
    verdict = Calls(cwd, [block]).bash(f"rm -r {cwd}")
    assert verdict.verdict == "block"
    assert "builtin.guard-home" in verdict.rule_ids
    assert Calls(cwd, [block]).bash(f"cat {cwd}").verdict == "allow"
    confirm = compiled(id="builtin.guard-home", paths=[guard])
    assert "builtin.guard-home" not in Calls(cwd, [confirm]).bash(f"rm -r {cwd}").rule_ids


def test_a_blocked_root_needs_a_literal_path(cwd: Path) -> None:
    block = compiled(id="builtin.g", paths=[str(cwd / "g*")], verdict="block")
    verdict = Calls(cwd, [block]).bash(f"rm -r {cwd}")
    assert "builtin.g" not in verdict.rule_ids


def test_grep_globs_are_read_only_mentions(cwd: Path) -> None:
    writes = Calls(cwd, [dotenv(["write"])])
    assert writes.tool("grep", pattern="x", glob=".env*").verdict == "allow"
    assert writes.tool("find", pattern=".env*").verdict == "allow"


def test_grep_globs_search_beneath_what_they_select_and_find_globs_do_not(cwd: Path) -> None:
    homes = str(cwd / "*" / "home")  # a glob: no literal root the grep path could hold
    calls = Calls(cwd, [compiled(id="builtin.guard-home", paths=[homes], verdict="block")])
    assert calls.tool("grep", pattern="x", glob="/gu*").verdict == "block"
    assert calls.tool("find", pattern="/gu*").verdict == "allow"


def test_an_input_problem_is_not_relaxed_by_a_user_exception(cwd: Path) -> None:
    ok = compiled(
        id="user.any",
        layer="user",
        verdict="allow",
        paths=["**"],
        relaxes=["builtin.invalid-input"],
    )
    verdict = Calls(cwd, [], [ok]).tool("write", path="", content="")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids == ("builtin.invalid-input",)


def test_a_path_exception_does_not_relax_a_command_rule(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    ok = compiled(
        id="user.all", layer="user", verdict="allow", paths=["**"], relaxes=["builtin.rm"]
    )
    assert Calls(cwd, [rm], [ok]).bash("rm x").verdict == "confirm"


def test_targets_are_listed_once_file_path_first(cwd: Path) -> None:
    a = compiled(id="builtin.a", paths=["**/.env"], reason="a")
    b = compiled(id="builtin.b", paths=["**/.e*"], verdict="block", reason="b")
    env = str(cwd / ".env")
    verdict = Calls(cwd, [a, b]).tool("custom", path="@.env")
    assert verdict.rule_ids == ("builtin.b", "builtin.unknown-tool", "builtin.a")
    assert verdict.targets == (str(cwd / "@.env"), env)
    assert verdict.reasons[0] == f"b: {env}" and verdict.reasons[2] == f"a: {env}"


def test_search_globs_are_shown_as_the_pattern_checked(cwd: Path) -> None:
    calls = Calls(cwd, [dotenv()])
    assert calls.tool("find", pattern="/sub/.env").targets == (str(cwd), f"{cwd}/sub/.env")
    assert calls.tool("find", pattern=".e{nv,x}").targets == (str(cwd), f"{cwd}/**/.e*nv,x*")
    assert calls.tool("grep", path="/", pattern="x", glob=".env*").targets == ("/", "/**/.env*")
    (cwd / "dirX").mkdir()
    assert calls.tool("find", path="dirX", pattern=".env").targets == (
        str(cwd / "dirX"),
        f"{cwd}/dirX/**/.env",
    )


def test_path_rules_before_command_rules_do_not_hide_them(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    web = compiled(id="builtin.web", tools=["webfetch"])
    calls = Calls(cwd, [dotenv(), web, rm])
    assert calls.bash("rm x").rule_ids == ("builtin.rm",)


def test_home_is_the_users_home_for_commands(cwd: Path) -> None:
    home = os.environ["HOME"]
    calls = Calls(cwd, [dotenv()])
    wipe = calls.bash("rm -rf ~")
    assert wipe.verdict == "block"
    assert wipe.rule_ids == ("builtin.catastrophic-target",)
    assert wipe.targets == (home,)
    assert calls.bash("cat ~/.env").targets == (f"{home}/.env",)


def test_findings_of_the_bash_analysis_become_checks(cwd: Path) -> None:
    verdict = Calls(cwd, []).bash('eval "$CMD"')
    assert verdict.rule_ids == ("builtin.eval",)
    assert verdict.reasons == ('eval runs a string as a command: eval "$CMD"',)
    unresolved = Calls(cwd, []).bash("cat $F")
    assert unresolved.rule_ids == ("builtin.unresolved",)
    assert unresolved.reasons == ("a path only known at runtime: $F",)


def test_the_cwd_is_where_relative_paths_are(cwd: Path) -> None:
    sub = cwd / "sub"
    sub.mkdir()
    calls = Calls(cwd, [dotenv()])
    verdict = calls.classifier.classify("read", {"path": ".env"}, sub)
    assert verdict.path == str(sub / ".env")
    assert calls.classifier.classify("bash", {"command": "cat .env"}, sub).targets == (
        str(sub / ".env"),
    )


# -- more boundaries found by mutation testing -------------------------------------------------


def test_a_search_glob_keeps_its_letters(cwd: Path) -> None:
    calls = Calls(cwd, [dotenv()])
    assert calls.tool("find", pattern="/Xa/.env").targets == (str(cwd), f"{cwd}/Xa/.env")


def test_a_search_tool_with_an_unusable_path_asks(cwd: Path) -> None:
    for tool in ("grep", "find", "ls"):
        verdict = Calls(cwd, [dotenv()]).tool(tool, path="", pattern=".env", glob=".env")
        assert verdict.rule_ids == ("builtin.invalid-input",), tool
        assert verdict.reasons == ("the path input is not usable: ''",)


def test_an_unusable_path_of_another_type_is_shown_as_python_would(cwd: Path) -> None:
    verdict = Calls(cwd, []).tool("write", path=["a", "b"], content="")
    assert verdict.reasons == ("the path input is not usable: ['a', 'b']",)


def test_a_lone_at_is_not_read_as_the_cwd_by_other_tools(cwd: Path) -> None:
    calls = Calls(cwd, [compiled(id="builtin.cwd", paths=[str(cwd)])])
    verdict = calls.tool("custom", path="@")
    assert verdict.targets == (str(cwd / "@"),)
    assert calls.tool("read", path="@").targets == (str(cwd),)  # pi reads "@" as the cwd


def test_the_other_readings_of_a_path_keep_its_access(cwd: Path) -> None:
    assert Calls(cwd, [dotenv(["read"])]).tool("custom", path="@.env").verdict == "confirm"
    assert Calls(cwd, [dotenv(["write"])]).tool("custom", path="@.env").verdict == "confirm"


def test_every_symlink_of_a_command_is_resolved(cwd: Path) -> None:
    (cwd / "secrets").mkdir()
    (cwd / "secrets" / "k").write_text("x")
    (cwd / "link").symlink_to(cwd / "secrets" / "k")
    rule = compiled(id="builtin.s", paths=[str(cwd / "secrets/**")])
    calls = Calls(cwd, [rule])
    assert calls.bash("cat a a link").rule_ids == ("builtin.s",)
    assert calls.bash("cat $F link").rule_ids == ("builtin.unresolved", "builtin.s")


def test_a_script_written_and_run_in_one_call_is_inline_code(cwd: Path) -> None:
    verdict = Calls(cwd, []).bash("echo rm > x.sh; ./x.sh")
    assert "builtin.inline-code" in verdict.rule_ids


def test_target_path_rules_see_the_commands_targets(cwd: Path) -> None:
    rule = compiled(id="builtin.rm-vendor", program=["rm"], target_paths=[str(cwd / "vendor/**")])
    calls = Calls(cwd, [rule])
    assert calls.bash("rm vendor/a").rule_ids == ("builtin.rm-vendor",)
    assert calls.bash("rm src/a").verdict == "allow"


def test_a_tool_scoped_path_rule_does_not_hide_the_next_path_rule(cwd: Path) -> None:
    scoped = compiled(id="builtin.w", paths=["**/.env"], tools=["write"])
    calls = Calls(cwd, [scoped, dotenv()])
    assert calls.tool("read", path=".env").rule_ids == ("builtin.dotenv",)


def test_exact_and_globbed_program_rules_both_fire(cwd: Path) -> None:
    exact = compiled(id="builtin.rm", program=["rm"])
    globbed = compiled(id="builtin.r", program=["r*"])
    assert Calls(cwd, [exact, globbed]).bash("rm x").rule_ids == ("builtin.rm", "builtin.r")


def test_the_value_of_a_global_option_is_not_a_subcommand(cwd: Path) -> None:
    push = compiled(id="builtin.push", program=["git"], subcommand=["push"])
    calls = Calls(cwd, [push])
    assert calls.bash("git -C push status").verdict == "allow"
    assert calls.bash("git -C repo push").rule_ids == ("builtin.push",)


def test_an_exception_that_does_not_apply_does_not_stop_the_next_one(cwd: Path) -> None:
    rm = compiled(id="builtin.rm", program=["rm"])
    web = compiled(id="builtin.web", tools=["webfetch"])

    def allow(rule_id: str, relaxes: str, **fields: Any) -> CompiledRule:
        return compiled(id=rule_id, layer="user", verdict="allow", relaxes=[relaxes], **fields)

    other = allow("user.other", "builtin.dd", program=["rm"])
    wrong_tool = allow("user.web-other", "builtin.web", tools=["websearch"])
    scoped = allow("user.rm-sh", "builtin.rm", program=["rm"], tools=["sh"])
    ok_rm = allow("user.rm", "builtin.rm", program=["rm"])
    ok_web = allow("user.web", "builtin.web", tools=["webfetch"])
    calls = Calls(cwd, [rm, web], [other, wrong_tool, scoped, ok_rm, ok_web])
    assert calls.bash("rm x").rule_ids == ("user.rm",)
    assert calls.tool("webfetch").rule_ids == ("builtin.unknown-tool", "user.web")


def test_a_glob_under_home_is_checked_on_what_it_expands_to(cwd: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / "secrets.txt").write_text("x")
    calls = Calls(cwd, [compiled(id="builtin.home-secrets", paths=[str(home / "secrets.txt")])])
    verdict = calls.bash("cat ~/*.txt")
    assert verdict.rule_ids == ("builtin.home-secrets",)
    assert verdict.reasons == (f"matches rule builtin.home-secrets: {home}/secrets.txt",)


def test_an_unusable_path_too_deep_to_show_still_asks(cwd: Path) -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    verdict = Calls(cwd, []).tool("write", path=deep, content="")
    assert verdict.rule_ids == ("builtin.invalid-input",)
    assert verdict.reasons == ("the path input is not usable: <list nested too deeply to show>",)
