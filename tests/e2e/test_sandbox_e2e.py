"""The OS sandbox inside the real pi: the agent's own ``bash`` tool against the guard.

Each attack is one tool call of the scripted model, run by pi's bash tool that the shim
replaced with pi's own plus the sandbox's spawn hook. Whatever the policy thinks of a command,
the operator answers **Yes** to every dialog here, so that what stops the attack is the sandbox,
not the analysis or a No. Runs on both pinned pi versions (the ``world`` fixture).
"""

from __future__ import annotations

import base64
import json
import os
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tools.pi.scripted_model import ScriptedModelServer, ToolCall

from .pi_world import (
    World,
    bash,
    confirms,
    notices,
    result_text,
    serving_sidecars,
    sidecar_pids,
    statuses,
    tool_ends,
    turns,
)

pytestmark = pytest.mark.e2e
# Fails (never skips) where bubblewrap cannot start: it is a requirement.
needs_bwrap = pytest.mark.usefixtures("bwrap_required")

HOST_PID_NS = os.readlink("/proc/self/ns/pid")


def yes(_request: Mapping[str, Any]) -> bool:
    return True


def key_text(world: World) -> str:
    return (world.home / "signing.key").read_text().strip()


def guard_blocked(end: Mapping[str, Any]) -> bool:
    return "operator-guard blocked" in result_text(end)


def ran(ends: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The calls that reached the shell: the guard let them through (after a Yes if it asked)."""
    return [end for end in ends if not guard_blocked(end)]


def by_command(events: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each bash call's end event by its command (calls of one message may end in any order)."""
    commands = {
        e["toolCallId"]: e["args"]["command"]
        for e in events
        if e.get("type") == "tool_execution_start" and e.get("toolName") == "bash"
    }
    return {commands[end["toolCallId"]]: end for end in tool_ends(events)}


def hidden_path(path: Path) -> str:
    """Shell text naming ``path`` only at run time, so no static reading can resolve it: the
    policy asks (the operator says Yes here) and the command reaches the sandbox."""
    encoded = base64.b64encode(str(path).encode()).decode()
    return f'"$(echo {encoded} | base64 -d)"'


def scenario(server: ScriptedModelServer, name: str, *commands: str) -> str:
    """A scenario with commands that name paths of this run; returns the prompt."""
    server.add_scenario(name, turns(*(bash(c) for c in commands)))
    return f"scenario:{name}"


def write_user_policy(world: World, text: str) -> None:
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text(text)


def session_started(world: World) -> list[dict[str, Any]]:
    return [r["data"] for r in world.audit("session.started")]


def stderr_of(world: World) -> str:
    return "".join(p.read_text() for p in world.tmp.glob("pi-stderr-*.log"))


# -- sandboxed (the default) -------------------------------------------------------------------


@needs_bwrap
@pytest.mark.every_pi
def test_the_agents_bash_runs_sandboxed_and_says_so_everywhere(world: World) -> None:
    with world.rpc() as pi:
        events = pi.prompt("scenario:sandbox-pid-namespace", yes)
        (sidecar,) = sidecar_pids(pi.proc.pid)
        written = pi.prompt("scenario:sandbox-workspace-write", yes)
        *_, status = pi.command("/guard")
    (end,) = tool_ends(events)
    namespace = result_text(end).strip()
    assert namespace.startswith("pid:["), namespace
    assert namespace != HOST_PID_NS  # its own PID namespace: the agent's command is in bwrap
    assert statuses(events) == [f"operator-guard on (sidecar pid {sidecar}, sandboxed)"]
    assert not [n for n in notices(events) if "sandbox" in n.lower()]  # nothing to warn about

    (write,) = tool_ends(written)
    assert write["isError"] is False, result_text(write)
    assert (world.project / "out.txt").read_text() == "hi\n"  # the workspace is writable

    assert "sandbox:      sandboxed: agent commands run in bubblewrap" in status["message"]
    (started,) = session_started(world)
    assert started["sandbox"] == "sandboxed"
    assert started["scope"] == str(world.project.resolve())
    assert started["piVersion"] == world.pi.version
    assert started["sidecarRestarted"] is False


@needs_bwrap
def test_the_signing_key_cannot_be_read_from_the_agents_bash(
    world: World, model_server: ScriptedModelServer
) -> None:
    key = world.home / "signing.key"
    with world.rpc() as pi:
        pi.prompt("scenario:sandbox-pid-namespace", yes)  # the guard home exists from here on
        direct = scenario(
            model_server,
            f"read-key-{world.pi.flavor}",
            f"cat {key}",
            f"cat {world.home}/sign*.key",
            f"cat /proc/self/root{key}",
        )
        events = pi.prompt(direct, yes)
        events += pi.prompt("scenario:sandbox-read-key-sideways", yes)
    secret = key_text(world)
    ends = tool_ends(events)
    assert len(ends) == 6
    for end in ends:
        assert secret not in result_text(end), end
    assert ran(ends), "every attempt was stopped by the policy: nothing proves the sandbox"
    # In there the home is an empty directory: no key to cat, an empty tar.
    assert "No such file or directory" in "".join(result_text(end) for end in ran(ends))


@needs_bwrap
def test_the_guards_venv_and_extension_files_cannot_be_written(
    world: World, model_server: ScriptedModelServer
) -> None:
    site_packages = Path(sysconfig.get_paths()["purelib"])
    extension = world.extensions_dir() / "operator-guard"
    before = {p: p.read_bytes() for p in (extension / "index.ts", extension / "guard.json")}
    venv_writes = [
        f"echo 'import os' > {site_packages}/evil.pth",  # the policy may refuse this one itself
        f"cp /dev/null {site_packages}/guard-takeover.pth",
        f"echo 'import os' > {hidden_path(site_packages)}/evil.pth",
    ]
    prompt = scenario(
        model_server,
        f"write-venv-{world.pi.flavor}",
        *venv_writes,
        f"echo x >> {extension}/index.ts",
    )
    with world.rpc() as pi:
        events = pi.prompt(prompt, yes)
        events += pi.prompt("scenario:sandbox-write-extension", yes)
    ends = by_command(events)
    assert len(ends) == 6
    venv_ran = ran([ends[c] for c in venv_writes])
    extension_ran = ran([end for c, end in ends.items() if c not in venv_writes])
    assert venv_ran, "the policy stopped every venv write: nothing proves the sandbox"
    assert extension_ran, "the policy stopped every extension write: nothing proves the sandbox"
    for end in venv_ran + extension_ran:
        assert end["isError"] is True
        assert "Read-only file system" in result_text(end)
    assert not (site_packages / "evil.pth").exists()
    assert not (site_packages / "guard-takeover.pth").exists()
    assert {p: p.read_bytes() for p in before} == before


@needs_bwrap
def test_the_sidecar_cannot_be_killed_from_the_agents_bash(
    world: World, model_server: ScriptedModelServer
) -> None:
    with world.rpc() as pi:
        pi.prompt("scenario:sandbox-pid-namespace", yes)
        (sidecar,) = sidecar_pids(pi.proc.pid)
        prompt = scenario(
            model_server,
            f"kill-{sidecar}",
            f"kill {sidecar}",
            f"kill -9 {sidecar}",
            f"ls /proc/{sidecar}",
        )
        events = pi.prompt(prompt, yes)
        events += pi.prompt("scenario:sandbox-kill-sidecar", yes)
        assert sidecar_pids(pi.proc.pid) == [sidecar]  # the same sidecar, alive
        after = pi.prompt("scenario:rm-build", lambda _request: False)
    ends = tool_ends(events)
    assert len(ends) == 5
    assert ran(ends), "every attempt was stopped by the policy: nothing proves the sandbox"
    # Its own PID namespace: the sidecar's pid is nobody in there (calls may end in any order).
    said = "".join(result_text(end) for end in ends)
    assert "No such process" in said  # kill, kill -9
    assert f"/proc/{sidecar}" in said and "No such file or directory" in said  # ls
    assert statuses(events) == []  # the footer never went down: no restart
    (dialog,) = confirms(after)  # the same sidecar still guards
    assert "rm -rf build" in dialog["message"]
    assert (world.project / "build" / "keep.txt").exists()


@needs_bwrap
def test_a_pth_takeover_fails_end_to_end(world: World, model_server: ScriptedModelServer) -> None:
    """The attack from the review: plant a .pth in the guard's venv, kill the sidecar so a
    fresh one imports it, then run what the planted code would allow. Each step fails."""
    site_packages = Path(sysconfig.get_paths()["purelib"])
    planted = "import os; os.environ['PI_OPERATOR_GUARD_HOME'] = '/nonexistent'"
    prompt = scenario(
        model_server,
        f"pth-{world.pi.flavor}",
        f'printf "%s\\n" "{planted}" > {site_packages}/zz-takeover.pth',
        f'printf "%s\\n" "{planted}" > {hidden_path(site_packages)}/zz-takeover.pth',
    )
    with world.rpc() as pi:
        planted_events = pi.prompt(prompt, yes)
        (sidecar,) = sidecar_pids(pi.proc.pid)
        killed = pi.prompt("scenario:sandbox-kill-sidecar", yes)
        assert sidecar_pids(pi.proc.pid) == [sidecar]
        rm = pi.prompt("scenario:rm-build", lambda _request: False)
    writes = ran(tool_ends(planted_events))
    assert writes, "the policy stopped every write: nothing proves the sandbox"
    for write in writes:
        assert write["isError"] is True
        assert "Read-only file system" in result_text(write)
    assert not (site_packages / "zz-takeover.pth").exists()
    assert len(tool_ends(killed)) == 2
    (dialog,) = confirms(rm)  # still asks: the guard was neither rewritten nor restarted
    assert "rm -rf build" in dialog["message"]
    (end,) = tool_ends(rm)
    assert "[reason: declined]" in result_text(end)
    assert (world.project / "build" / "keep.txt").exists()
    assert len(session_started(world)) == 1  # one sidecar the whole session


# -- no sandbox --------------------------------------------------------------------------------


@pytest.mark.every_pi
def test_without_bwrap_the_agents_bash_is_blocked_and_the_start_says_why(world: World) -> None:
    write_user_policy(world, '[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    with world.rpc() as pi:
        events = pi.prompt("scenario:sandbox-workspace-write", yes)
        (sidecar,) = sidecar_pids(pi.proc.pid)
        reads = pi.prompt("scenario:read-then-env", lambda _request: False)
        *_, status = pi.command("/guard")
    (notice,) = [n for n in notices(events) if "sandbox" in n]
    assert "the agent's bash is blocked" in notice
    assert "/nonexistent/bwrap" in notice
    assert notice.endswith("[reason: sandbox-unavailable]")
    assert "operator-guard: the agent's bash is blocked" in stderr_of(world)
    assert statuses(events) == [f"operator-guard on (sidecar pid {sidecar}, sandbox unavailable)"]

    assert confirms(events) == []  # blocked before any dialog
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert result_text(end).startswith("operator-guard blocked this bash call: ")
    assert result_text(end).endswith("[reason: sandbox-unavailable]")
    assert not (world.project / "out.txt").exists()

    read_end = tool_ends(reads)[0]  # pi's file tools are not sandboxed: they still work
    assert read_end["isError"] is False
    assert "e2e project" in result_text(read_end)

    assert "sandbox:      unavailable [missing-binary]" in status["message"]
    (started,) = session_started(world)
    assert started["sandbox"] == "unavailable"
    assert started["reason"] == "missing-binary"
    assert "/nonexistent/bwrap" in started["message"]

    # The block is counted: in the log and in the report, with what it was.
    (blocked,) = [
        r for r in world.audit("confirmation.declined") if r["data"]["reason"] != "declined"
    ]
    assert blocked["data"]["reason"] == "sandbox-unavailable"
    assert blocked["data"]["toolCallId"] == end["toolCallId"]
    report = world.cli("audit", "report", "--json")
    summary = json.loads(report.stdout)["summary"]
    assert summary["blockedByReason"] == {"sandbox-unavailable": 1}, report.stdout


def test_without_bwrap_print_mode_says_so_on_stderr(world: World) -> None:
    write_user_policy(world, '[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    done = world.print_mode("scenario:sandbox-workspace-write")
    lines = [line for line in done.stderr.splitlines() if line.startswith("operator-guard")]
    start, block = lines
    assert "the agent's bash is blocked" in start
    assert block.startswith("operator-guard blocked bash: ")
    assert block.endswith("[reason: sandbox-unavailable]")
    assert not (world.project / "out.txt").exists()


def test_an_opted_out_session_runs_bash_unsandboxed_and_says_so_everywhere(world: World) -> None:
    write_user_policy(world, '[sandbox]\nmode = "off"\n')
    with world.rpc() as pi:
        events = pi.prompt("scenario:sandbox-pid-namespace", yes)
        (sidecar,) = sidecar_pids(pi.proc.pid)
        written = pi.prompt("scenario:sandbox-workspace-write", yes)
        *_, status = pi.command("/guard")
    (end,) = tool_ends(events)
    assert result_text(end).strip() == HOST_PID_NS  # no sandbox: the host's PID namespace
    (notice,) = [n for n in notices(events) if "UNSANDBOXED" in n]
    assert 'mode = "off"' in notice
    assert "UNSANDBOXED" in stderr_of(world)
    assert statuses(events) == [f"operator-guard on (sidecar pid {sidecar}, unsandboxed)"]
    (write,) = tool_ends(written)
    assert write["isError"] is False
    assert (world.project / "out.txt").read_text() == "hi\n"
    assert "sandbox:      unsandboxed [opted-out]" in status["message"]
    (started,) = session_started(world)
    assert started["sandbox"] == "unsandboxed"
    assert started["reason"] == "opted-out"


@needs_bwrap
def test_a_restarted_sidecar_plans_the_sandbox_again(world: World) -> None:
    with world.rpc() as pi:
        pi.prompt("scenario:rm-a", yes)
        (old,) = serving_sidecars(pi.proc.pid)
        os.kill(old, 9)
        pi.prompt("scenario:rm-b", yes)  # fails closed, starts a new sidecar
        events = pi.prompt("scenario:sandbox-pid-namespace", yes)
        (new,) = serving_sidecars(pi.proc.pid)
        on = f"operator-guard on (sidecar pid {new}, sandboxed)"
        # the footer follows the new sidecar's health probe, which may answer after the prompt
        pi.wait_for(lambda seen: on in statuses(seen))
    assert result_text(tool_ends(events)[0]).strip() != HOST_PID_NS
    assert statuses(pi.events)[-1] == on
    first, again = session_started(world)
    assert (first["sidecarRestarted"], again["sidecarRestarted"]) == (False, True)
    assert again["sandbox"] == "sandboxed"


def test_pi_file_tools_refuse_the_guard_home_and_installation(
    world: World, model_server: ScriptedModelServer
) -> None:
    """The sandbox wraps only ``bash``; pi's own file tools are the policy's to refuse."""
    key = world.home / "signing.key"
    extension = world.extensions_dir() / "operator-guard" / "index.ts"
    site = Path(sysconfig.get_paths()["purelib"])
    name = f"file-tools-{world.pi.flavor}"
    model_server.add_scenario(
        name,
        turns(
            ToolCall("read", {"path": str(key)}),
            ToolCall("write", {"path": str(extension), "content": "// taken over\n"}),
            ToolCall("write", {"path": str(site / "evil.pth"), "content": "import os\n"}),
            ToolCall(
                "edit",
                {"path": str(world.home / "operator-guard.toml"), "oldText": "x", "newText": "y"},
            ),
        ),
    )
    with world.rpc() as pi:
        pi.prompt("scenario:sandbox-pid-namespace", yes)  # the guard home exists from here on
        before = extension.read_bytes()
        events = pi.prompt(f"scenario:{name}", yes)
    ends = tool_ends(events)
    assert len(ends) == 4
    assert confirms(events) == [], "refused outright: there is no Yes that could allow these"
    for end in ends:
        assert end["isError"] is True and guard_blocked(end), end
    assert key_text(world) not in "".join(result_text(end) for end in ends)
    assert extension.read_bytes() == before
    assert not (site / "evil.pth").exists()
