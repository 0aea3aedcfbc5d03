"""'No, and stop the agent' with parallel calls, in the real pi (both pinned versions).

pi prepares a turn's calls one by one and then runs them together; the operator's "stop" on
the first dialog aborts the turn. The current pi answers every call still queued with its own
"Operation aborted", without asking any extension; the older one still asks. Either way every
call of that turn is the guard's ``stopped`` (what the model reads says the operator stopped
it), is counted in the session's counts, and ``audit report --sessions`` finds no call that
ran without the guard.
"""

from __future__ import annotations

import json

import pytest

from tools.pi.harness import Pick, is_guard_dialog, read_session_entries
from tools.pi.scripted_model import ScriptedModelServer, ToolCall

from .pi_world import World, bash, confirms, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

FILES = ("a.txt", "b.txt", "c.txt")


def _run(world: World, model_server: ScriptedModelServer, name: str, calls: list[ToolCall]) -> list:
    for file in FILES:
        (world.project / file).write_text(file)
    model_server.add_scenario(name, turns(*calls))
    with world.rpc() as pi:
        return pi.prompt(
            f"scenario:{name}", lambda r: Pick("stop") if is_guard_dialog(r) else False, timeout=120
        )


def model_reads(world: World) -> dict[str, str]:
    """Each tool result's text in pi's session file, by call id."""
    return {
        message["toolCallId"]: "".join(p.get("text", "") for p in message["content"])
        for entry in read_session_entries(world.sessions)
        if entry.get("type") == "message"
        and (message := entry["message"]).get("role") == "toolResult"
    }


@pytest.mark.parametrize(
    "calls",
    [
        # the asked call first: every other is queued behind it
        [bash("rm -f a.txt"), bash("rm -f b.txt"), bash("rm -rf c"), bash("echo hello")],
        # calls pi prepared before the dialog (allowed) are aborted with the rest
        [bash("echo before"), bash("rm -f a.txt"), bash("mv b.txt c.txt"), bash("rm -rf build")],
        # other tools than bash queued behind it
        [
            bash("rm -f c.txt"),
            ToolCall("write", {"path": "README.md", "content": "replaced\n"}),
            ToolCall("read", {"path": "README.md"}),
        ],
    ],
    ids=["asked-first", "allowed-before", "other-tools"],
)
@pytest.mark.every_pi
@pytest.mark.variants_on_newest_pi
def test_no_and_stop_records_every_call_of_the_turn_as_stopped(
    world: World,
    model_server: ScriptedModelServer,
    calls: list[ToolCall],
    request: pytest.FixtureRequest,
) -> None:
    name = "stop-" + "".join(c if c.isalnum() else "-" for c in request.node.name)
    events = _run(world, model_server, name, calls)
    assert len(confirms(events)) == 1  # the first asked call; the rest never asked
    for file in FILES:
        assert (world.project / file).exists(), file
    assert (world.project / "c" / "keep.txt").exists()
    assert (world.project / "build" / "keep.txt").exists()
    assert (world.project / "README.md").read_text() == "# e2e project\n"
    ends = tool_ends(events)
    assert len(ends) == len(calls)
    read = model_reads(world)  # pi's session file: what the model reads next turn
    assert sorted(read) == sorted(end["toolCallId"] for end in ends)
    for text in read.values():
        assert "stopped by the operator" in text, read
    declined = world.audit("confirmation.declined")
    ids = {r["data"]["toolCallId"] for r in declined}
    assert ids == set(read), declined
    assert {r["data"]["reason"] for r in declined} == {"stopped"}
    assert world.audit("tool.executed") == []  # nothing ran
    report = world.cli("audit", "report", "--json", "--sessions", str(world.sessions))
    assert report.returncode == 0, report.stdout[-3000:]
    data = json.loads(report.stdout)
    assert data["summary"]["auditGaps"] == 0
    assert data["summary"]["stopped"] == len(calls)
    (counts,) = data["summary"]["bySession"].values()
    assert counts["stopped"] == len(calls), counts
