"""Every tool the agent reaches is judged: MCP tools, other extensions' tools, codemode and
the tools that imitate the ones the guard knows (issue: "every tool judged").

Each test classifies real calls with the real policy of a temporary home, with the facts
pi's ``getAllTools()`` would give the shim, and fails when a call the guard cannot judge
from facts would run unasked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard._policy import ToolFacts, Verdict
from tests.guard.policy.conftest import World


def mcp(
    server: str,
    tool: str,
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    origin: str = "builtin:mcp",
    source: str = "builtin",
) -> ToolFacts:
    hints: dict[str, Any] = {}
    if read_only is not None:
        hints["readOnlyHint"] = read_only
    if destructive is not None:
        hints["destructiveHint"] = destructive
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in server)
    return ToolFacts.model_validate(
        {
            "name": f"mcp__{safe}__{tool}",
            "source": source,
            "origin": origin,
            "namespace": {"name": f"mcp__{server}", "aliases": [server]},
            "annotations": hints or None,
        }
    )


def user_mcp(world: World, servers: dict[str, dict[str, Any]]) -> None:
    agent = world.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def project_mcp(world: World, servers: dict[str, dict[str, Any]] | str) -> None:
    (world.project / ".pi").mkdir(exist_ok=True)
    text = servers if isinstance(servers, str) else json.dumps({"mcpServers": servers})
    (world.project / ".pi" / "mcp.json").write_text(text)


def trusting(world: World, *servers: str) -> None:
    names = ", ".join(json.dumps(s) for s in servers)
    world.user_config(f"[mcp]\ntrust_hints = [{names}]\n")
    user_mcp(world, {s: {"command": "srv"} for s in servers})


def judge(world: World, facts: ToolFacts | None, name: str = "", **args: Any) -> Verdict:
    tool = facts.name if facts is not None else name
    return world.policy().classify(tool, args, world.project, facts)


# -- the default: what the guard cannot judge from facts asks ------------------------------------


@pytest.mark.parametrize(
    "facts",
    [
        mcp("x", "exec"),
        mcp("x", "delete", destructive=True),
        mcp("x", "get", read_only=True),  # a hint of a server nobody trusted
        mcp("x", "get", read_only=True, destructive=True),
    ],
    ids=["unannotated", "destructive", "read-only-untrusted", "read-only-and-destructive"],
)
def test_mcp_tools_ask_by_default(world: World, facts: ToolFacts) -> None:
    verdict = judge(world, facts, query="weather")
    assert verdict.verdict == "confirm"
    assert "builtin.unknown-tool" in verdict.rule_ids
    assert any("MCP server 'x'" in r for r in verdict.reasons)


def test_the_issue_s_evaluate_asks_or_blocks_not_allows(world: World) -> None:
    verdict = judge(world, None, "mcp__x__exec", command="rm -rf ~")
    assert verdict.verdict == "block"  # rm -rf of the home directory, whatever the tool
    assert "builtin.catastrophic-target" in verdict.rule_ids
    assert judge(world, None, "mcp__x__exec", command="rm -rf ~/important").verdict == "confirm"


@pytest.mark.parametrize("source", ["extension", "sdk", "unknown"])
def test_other_extensions_tools_ask(world: World, source: str) -> None:
    facts = ToolFacts.model_validate(
        {"name": "danger_tool", "source": source, "origin": "/x/ext/index.ts"}
    )
    verdict = judge(world, facts, target="build")
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids[0] == "builtin.unknown-tool"


# -- trusted hints: only the user's servers, only read-only ---------------------------------------


def test_a_trusted_servers_read_only_tool_runs_unasked(world: World) -> None:
    trusting(world, "docs")
    verdict = judge(world, mcp("docs", "search", read_only=True), query="pi")
    assert verdict.verdict == "allow"
    assert any("hints of the MCP server 'docs'" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    ("facts", "why"),
    [
        (mcp("docs", "drop", destructive=True), "destructive"),
        (mcp("docs", "both", read_only=True, destructive=True), "both hints"),
        (mcp("docs", "bare"), "no hints"),
        (mcp("docs", "write", read_only=False), "readOnly false"),
        # an extension's tool named like the trusted server's, with the same namespace
        (mcp("docs", "search", read_only=True, source="extension", origin="/e/x.ts"), "spoof"),
        (mcp("docs", "search", read_only=True, origin="builtin:other"), "other built-in"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_hints_never_relax_in_the_unsafe_direction(
    world: World, facts: ToolFacts, why: str
) -> None:
    trusting(world, "docs")
    assert judge(world, facts, query="x").verdict == "confirm", why


def test_a_trusted_read_only_tool_still_asks_for_protected_paths(world: World) -> None:
    trusting(world, "fs")
    read = mcp("fs", "read_file", read_only=True)
    (world.home / ".ssh").mkdir()
    ssh = judge(world, read, path="~/.ssh/id_rsa")
    assert ssh.verdict == "confirm" and "builtin.ssh" in ssh.rule_ids
    # deeper in the arguments, as a file: URI, under another key
    nested = judge(world, read, options={"files": [f"file://{world.home}/.ssh/id_ed25519"]})
    assert nested.verdict == "confirm" and "builtin.ssh" in nested.rule_ids
    guard = judge(world, read, location=str(world.guard_home / "signing.key"))
    assert guard.verdict == "block" and "builtin.guard-home" in guard.rule_ids
    assert judge(world, read, path="README.md").verdict == "allow"
    # a relative path under a key the guard does not know (the server resolves it itself)
    (world.project / ".env").write_text("TOKEN=x\n")
    dotenv = judge(world, read, q=".env")
    assert dotenv.verdict == "confirm" and "builtin.dotenv" in dotenv.rule_ids
    assert judge(world, read, q="../home/.ssh/x", text="hello world").verdict != "allow"
    assert judge(world, read, q="hello world", mime="text/plain").verdict == "allow"


def test_a_command_argument_is_judged_as_a_command(world: World) -> None:
    trusting(world, "ops")
    tool = mcp("ops", "run", read_only=True)  # a lying hint: it runs commands
    key = world.guard_home / "signing.key"
    assert judge(world, tool, cmd=f"cat {key}").verdict == "block"
    assert judge(world, tool, command="rm -rf build").verdict == "confirm"
    assert judge(world, tool, script="python3 -m guard keys").verdict == "block"


def test_trust_needs_the_users_own_mcp_json(world: World) -> None:
    world.user_config('[mcp]\ntrust_hints = ["docs"]\n')  # trusted by name, configured nowhere
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "confirm"
    user_mcp(world, {"docs": {"url": "https://docs.example/mcp"}})
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "allow"


@pytest.mark.parametrize(
    "entry",
    [{"command": "evil"}, {"url": "http://127.0.0.1:1/mcp"}, {"type": "stdio", "command": "e"}],
)
def test_a_project_server_named_like_a_users_never_runs_unasked(
    world: World, entry: dict[str, Any]
) -> None:
    trusting(world, "docs")
    project_mcp(world, {"docs": entry})
    verdict = judge(world, mcp("docs", "search", read_only=True))
    assert verdict.verdict == "confirm"
    assert "builtin.project-mcp-server" in verdict.rule_ids
    # the same server spelled with '-' for '_' is the same server to pi
    project_mcp(world, {"my-docs": entry})
    trusting(world, "my_docs")
    assert judge(world, mcp("my_docs", "search", read_only=True)).verdict == "confirm"


def test_a_project_entry_that_only_changes_exposure_keeps_the_users_server(world: World) -> None:
    trusting(world, "docs")
    project_mcp(world, {"docs": {"exposure": "direct"}})
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "allow"


@pytest.mark.parametrize("text", ["{not json", '{"mcpServers": []}', '{"mcpServers": {"a": 1'])
def test_a_project_mcp_json_the_guard_cannot_read_trusts_no_hints(world: World, text: str) -> None:
    trusting(world, "docs")
    project_mcp(world, text)
    verdict = judge(world, mcp("docs", "search", read_only=True))
    assert verdict.verdict == "confirm"
    assert "builtin.project-mcp-server" in verdict.rule_ids


def test_a_projects_mcp_section_trusts_nothing(world: World) -> None:
    user_mcp(world, {"docs": {"command": "x"}})
    world.project_config('[mcp]\ntrust_hints = ["docs"]\n')
    policy = world.policy()
    assert any("[mcp]" in p.message for p in policy.problems)
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "confirm"


# -- the user's rules by tool glob ----------------------------------------------------------------


def test_a_user_rule_relaxes_by_tool_glob_but_never_a_project_server(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.github-reads"\nverdict = "allow"\ntools = ["mcp__github__get_*"]\n'
        'relaxes = ["builtin.unknown-tool"]\n'
    )
    user_mcp(world, {"github": {"command": "gh-mcp"}})
    verdict = judge(world, mcp("github", "get_issue"), number=1)
    assert (verdict.verdict, verdict.rule_ids) == ("allow", ("me.github-reads",))
    assert judge(world, mcp("github", "delete_repo"), name="x").verdict == "confirm"
    # still judged by the path rules
    assert judge(world, mcp("github", "get_file"), path="~/.aws/credentials").verdict != "allow"
    project_mcp(world, {"github": {"command": "evil"}})
    assert judge(world, mcp("github", "get_issue"), number=1).verdict == "confirm"


def test_a_project_rule_can_only_add_asks_and_blocks(world: World) -> None:
    trusting(world, "docs")
    world.project_config(
        '[[rule]]\nid = "p.no-docs"\nverdict = "block"\ntools = ["mcp__docs__*"]\n\n'
        '[[rule]]\nid = "p.relax"\nverdict = "allow"\ntools = ["mcp__x__*"]\n'
        'relaxes = ["builtin.unknown-tool"]\n'
    )
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "block"
    assert judge(world, mcp("x", "exec")).verdict == "confirm"


# -- names that imitate what the guard knows ------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Bash",
        "bash ",
        " bash",
        "bаsh",  # Cyrillic a
        "ｂａｓｈ",  # fullwidth
        "bash\u200b",
        "READ",
        "codemode ",
        "Codemode",
        "tool-search",
        "read_mcp_resource2",
        "operator_confirmation_implementation_channel_plan_",
        "mcp__docs__search\u00a0",
    ],
)
def test_lookalike_names_are_tools_the_guard_does_not_know(world: World, name: str) -> None:
    trusting(world, "docs")
    verdict = world.policy().classify(name, {"command": "rm -rf build"}, world.project)
    assert verdict.verdict != "allow"
    assert "builtin.unknown-tool" in verdict.rule_ids
    assert "builtin.rm" in verdict.rule_ids  # and its command is judged all the same


@pytest.mark.parametrize("name", ["bash", "read", "write", "grep", "codemode", "read_mcp_resource"])
def test_a_known_name_registered_by_another_extension_asks(world: World, name: str) -> None:
    facts = ToolFacts.model_validate({"name": name, "source": "extension", "origin": "/e/x.ts"})
    args = {"command": "ls"} if name == "bash" else {"path": "README.md", "code": "1"}
    verdict = world.policy().classify(name, args, world.project, facts)
    assert verdict.verdict == "confirm"
    assert "builtin.unknown-tool" in verdict.rule_ids


def test_the_guards_planner_from_another_extension_asks(world: World) -> None:
    name = "operator_confirmation_implementation_channel_plan"
    own = ToolFacts.model_validate({"name": name, "source": "guard"})
    other = ToolFacts.model_validate({"name": name, "source": "extension", "origin": "/e.ts"})
    assert world.policy().classify(name, {}, world.project, own).verdict == "allow"
    assert world.policy().classify(name, {}, world.project, other).verdict == "confirm"


# -- what only reaches other tools, and the resource reads -----------------------------------------


def test_codemode_and_tool_search_only_reach_other_tools(world: World) -> None:
    for name in ("codemode", "tool_search"):
        facts = ToolFacts.model_validate({"name": name, "source": "builtin", "reachesTools": True})
        code = "await tools.mcp__x__delete({path: '/'}); await tools.bash({command: 'rm -rf ~'})"
        verdict = world.policy().classify(name, {"code": code, "query": "x"}, world.project, facts)
        assert verdict.verdict == "allow", name  # each nested call is judged itself


def test_resource_reads_are_reads(world: World) -> None:
    facts = ToolFacts.model_validate({"name": "read_mcp_resource", "source": "builtin"})
    read = world.policy().classify
    assert read("read_mcp_resource", {"server": "x", "uri": "note://1"}, world.project, facts).verdict == "allow"  # fmt: skip
    (world.home / ".ssh").mkdir()
    key = f"file://{world.home}/.ssh/id_rsa"
    assert read("read_mcp_resource", {"server": "x", "uri": key}, world.project, facts).verdict == "confirm"  # fmt: skip
    guard = f"file://{world.guard_home}/signing.key"
    assert read("read_mcp_resource", {"server": "x", "uri": guard}, world.project, facts).verdict == "block"  # fmt: skip
    for spelling in (
        f"FILE://{world.guard_home}/signing.key",
        f"File:{world.guard_home}/signing.key",
        f"file://localhost{world.guard_home}/signing%2Ekey",
        f"file:///{str(world.guard_home).lstrip('/')}/./signing.key",
    ):
        uri = {"server": "x", "uri": spelling}
        assert read("read_mcp_resource", uri, world.project, facts).verdict == "block", spelling


def test_arguments_too_many_to_judge_ask(world: World) -> None:
    trusting(world, "docs")
    tool = mcp("docs", "search", read_only=True)
    assert judge(world, tool, items=[str(i) for i in range(400)]).verdict == "confirm"
    deep: Any = "x"
    for _ in range(20):
        deep = {"a": deep}
    assert judge(world, tool, deep=deep).verdict == "confirm"


def test_facts_never_change_the_kind_or_the_fingerprint_path(world: World) -> None:
    """A monitor recomputes the fingerprint without facts: the kind and path must agree."""
    trusting(world, "fs")
    (world.home / ".ssh").mkdir()
    for args in ({"path": "~/.ssh/id_rsa"}, {"command": "rm -rf build"}, {"path": "x", "q": 1}):
        with_facts = judge(world, mcp("fs", "read_file", read_only=True), **args)
        without = judge(world, None, "mcp__fs__read_file", **args)
        if with_facts.verdict == "allow":
            continue
        assert (with_facts.action_kind, with_facts.path) == (without.action_kind, without.path)
        assert without.verdict != "allow"


def test_mcp_section_rejects_names_pi_would_not_take(world: World) -> None:
    world.user_config('[mcp]\ntrust_hints = ["docs", "a b"]\n')
    policy = world.policy()
    assert any("trust_hints" in p.key or "server names" in p.message for p in policy.problems)
    user_mcp(world, {"docs": {"command": "x"}})
    assert judge(world, mcp("docs", "search", read_only=True)).verdict == "confirm"


def test_unknown_tool_cannot_be_silenced_by_a_project_relaxation(world: World) -> None:
    project: Path = world.project
    world.project_config(
        '[[rule]]\nid = "p.ok"\nverdict = "allow"\ntools = ["*"]\nrelaxes = ["builtin.unknown-tool"]\n'
    )
    verdict = world.policy().classify("mcp__x__exec", {"q": 1}, project)
    assert verdict.verdict == "confirm"


def test_a_relative_path_is_judged_from_the_home_too(world: World) -> None:
    """A server rooted at the home (``server-filesystem ~``) reads ``.ssh/id_rsa`` there."""
    trusting(world, "fs")
    (world.home / ".ssh").mkdir()
    read = mcp("fs", "read_file", read_only=True)
    for args in ({"path": ".ssh/id_rsa"}, {"q": ".ssh/id_rsa"}, {"file": ".pi/agent/auth.json"}):
        verdict = judge(world, read, **args)
        assert verdict.verdict != "allow", args
    assert judge(world, read, path="src/main.py").verdict == "allow"
