"""Signed scoped grants in the real pi (both pinned versions): one dialog answered with a grant
covers the similar calls after it, each with evidence of its own; every near miss still asks.

The operator takes the dialog's second grant for ``rm -f a.txt`` ("``rm -f`` of files matching
``./*.txt`` for this session"); what follows in the same turn decides whether it asks again.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.guard.sidecar.test_sidecar_grants import E2E_NEAR_MISSES as NEAR_MISSES
from tools.pi.harness import Pick, grant_choices, is_guard_dialog
from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

from .pi_world import MODEL_ID, PROVIDER, World, bash, confirms, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]

FILES = ("a.txt", "b.txt", "c.txt", "d.txt", "e.log")


def grant_first(request: Mapping[str, Any]) -> bool | Pick:
    """The grant on ``./*.txt`` for the first dialog (``rm -f a.txt``), No to every other."""
    if "rm -f a.txt" in str(request.get("title")):
        return Pick("grant", 1)
    return False


def prepare(world: World) -> None:
    for name in FILES:
        (world.project / name).write_text(name)


def asked_about(events: list[dict[str, Any]]) -> list[str]:
    """The command of each guard dialog, in order."""
    out = []
    for dialog in confirms(events):
        title = str(dialog.get("title"))
        out.append(next(line[10:] for line in title.splitlines() if line.startswith("Command:")))
    return out


@pytest.mark.every_pi
def test_one_grant_covers_the_similar_calls_after_it(
    world: World, model_server: ScriptedModelServer
) -> None:
    prepare(world)
    calls = [bash(f"rm -f {n}") for n in ("a.txt", "b.txt", "c.txt", "d.txt")]
    model_server.add_scenario("grant-covers", turns(*calls))
    with world.rpc() as pi:
        events = pi.prompt("scenario:grant-covers", grant_first, timeout=120)
    assert asked_about(events) == ["rm -f a.txt"]  # four calls, one dialog
    (dialog,) = confirms(events)
    offered = grant_choices(dialog)
    assert len(offered) == 2 and "./*.txt" in offered[1], offered
    assert all(not (world.project / n).exists() for n in ("a.txt", "b.txt", "c.txt", "d.txt"))
    assert (world.project / "e.log").exists()
    # Every call has evidence of its own: one from the dialog, three from the grant.
    envelopes = [e["details"] for e in world.envelopes()]
    assert [d["origin"] for d in envelopes] == ["runtime-ui-confirm"] + ["runtime-grant"] * 3
    (created,) = [r["data"] for r in world.audit("grant.created")]
    assert created["evidenceId"] == envelopes[0]["evidenceId"]
    assert created["pattern"]["program"] == "rm" and created["pattern"]["fixedArgs"] == ["-f"]
    uses = [d["coveredBy"] for d in envelopes[1:]]
    assert uses == [
        {"grantId": created["grantId"], "use": n, "grantEvidenceId": created["evidenceId"]}
        for n in (1, 2, 3)
    ]
    assert [r["data"]["use"] for r in world.audit("grant.used")] == [1, 2, 3]
    # A monitor consumes a covered call's evidence as any other, unless it requires a dialog.
    strict = world.cli(
        "consume", "--require-dialog", "--envelope", "-", "--tool", "bash",
        "--tool-call-id", world.envelopes()[1]["details"]["toolCallId"],
        "--input", json.dumps({"command": "rm -f b.txt"}), "--cwd", str(world.project),
        stdin=json.dumps(world.envelopes()[1]),
    )  # fmt: skip
    assert strict.returncode == 3, strict.stderr
    assert json.loads(strict.stdout)["match"]["decision"] == "not-dialog"
    assert world.consume(world.envelopes()[1], "rm -f b.txt").returncode == 0
    # The session ended: its grant ended with it.
    (expired,) = [r["data"] for r in world.audit("grant.expired")]
    assert (expired["grantId"], expired["reason"], expired["uses"]) == (
        created["grantId"],
        "session-ended",
        3,
    )


# Every near miss runs in process, through a sidecar:
# tests/guard/sidecar/test_sidecar_grants.py::test_an_end_to_end_near_miss_still_asks (the
# table is its). Through the real pi, one the policy blocks outright and one that asks.
@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("what", ["another flag", "a second command that the policy blocks"])
def test_a_near_miss_still_asks(world: World, model_server: ScriptedModelServer, what: str) -> None:
    prepare(world)
    outside = world.tmp / "outside.txt"
    outside.write_text("not the workspace's")
    (world.project / "link.txt").symlink_to(outside)
    command = NEAR_MISSES[what]
    name = f"grant-near-{sorted(NEAR_MISSES).index(what)}"
    model_server.add_scenario(name, turns(bash("rm -f a.txt"), bash(command)))
    with world.rpc() as pi:
        events = pi.prompt(f"scenario:{name}", grant_first, timeout=120)
    assert world.audit("grant.created"), "the first dialog's grant was kept"
    assert world.audit("grant.used") == []  # never covered
    # Two calls in one turn: the first ran after its dialog, the near miss was declined.
    ends = sorted(tool_ends(events), key=lambda e: str(e["toolCallId"]))
    assert [e["isError"] for e in ends] == [False, True], ends
    blocked_outright = "rm -rf ~" in command  # never asked: the policy blocks it
    assert asked_about(events) == ["rm -f a.txt", *([] if blocked_outright else [command])]
    assert (world.project / "b.txt").exists() and outside.exists()


def test_after_the_last_use_it_asks(world: World, model_server: ScriptedModelServer) -> None:
    prepare(world)
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text("[grants]\nmax_uses = 1\n")
    calls = (bash("rm -f a.txt"), bash("rm -f b.txt"), bash("rm -f c.txt"))
    model_server.add_scenario("grant-last", turns(*calls))
    with world.rpc() as pi:
        events = pi.prompt("scenario:grant-last", grant_first, timeout=120)
    assert asked_about(events) == ["rm -f a.txt", "rm -f c.txt"]  # b.txt was the one use
    assert not (world.project / "b.txt").exists() and (world.project / "c.txt").exists()
    expired = [r["data"] for r in world.audit("grant.expired")]
    assert [(e["reason"], e["uses"]) for e in expired] == [("uses", 1)]


def test_another_pi_session_asks(world: World, model_server: ScriptedModelServer) -> None:
    prepare(world)
    model_server.add_scenario("grant-mine", turns(bash("rm -f a.txt")))
    model_server.add_scenario("grant-theirs", turns(bash("rm -f b.txt")))
    with world.rpc() as first, world.rpc() as second:
        first.prompt("scenario:grant-mine", grant_first, timeout=120)
        events = second.prompt("scenario:grant-theirs", grant_first, timeout=120)
    assert asked_about(events) == ["rm -f b.txt"]
    assert (world.project / "b.txt").exists()
    assert world.audit("grant.used") == []


def test_revoked_from_guard_then_the_next_similar_call_asks(
    world: World, model_server: ScriptedModelServer
) -> None:
    prepare(world)
    model_server.add_scenario("grant-before", turns(bash("rm -f a.txt")))
    model_server.add_scenario("grant-after", turns(bash("rm -f b.txt")))
    with world.rpc() as pi:
        pi.prompt("scenario:grant-before", grant_first, timeout=120)
        listed = pi.command("/guard grants")
        assert "./*.txt" in json.dumps(listed) or "*.txt" in json.dumps(listed)
        pi.command("/guard revoke all")
        events = pi.prompt("scenario:grant-after", grant_first, timeout=120)
    assert asked_about(events) == ["rm -f b.txt"]
    (revoked,) = [r["data"] for r in world.audit("grant.revoked")]
    assert revoked["by"] == "guard-command" and revoked["uses"] == 0
    assert (world.project / "b.txt").exists()


@pytest.mark.parametrize("mode", ["print", "json"])
def test_no_grant_is_offered_or_kept_without_a_ui(
    world: World, model_server: ScriptedModelServer, mode: str
) -> None:
    prepare(world)
    model_server.add_scenario("grant-print", turns(bash("rm -f a.txt"), bash("rm -f b.txt")))
    args = ["-p"] if mode == "print" else ["--mode", "json", "-p"]
    done = subprocess.run(
        world.pi.command(
            *args,
            "--provider",
            PROVIDER,
            "--model",
            MODEL_ID,
            "--no-session",
            "scenario:grant-print",
        ),
        cwd=world.project,
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Yes, and allow" not in done.stdout + done.stderr
    assert (world.project / "a.txt").exists() and (world.project / "b.txt").exists()
    assert world.audit("grant.created") == []
    assert not (world.home / "grants.jsonl").exists()
    declined = [r["data"]["reason"] for r in world.audit("confirmation.declined")]
    assert declined == ["no-ui", "no-ui"]


def test_stop_the_agent_declines_the_rest_of_the_turn(
    world: World, model_server: ScriptedModelServer
) -> None:
    prepare(world)
    model_server.add_scenario("grant-stop", turns(bash("rm -f a.txt"), bash("rm -f b.txt")))
    with world.rpc() as pi:
        events = pi.prompt(
            "scenario:grant-stop", lambda r: Pick("stop") if is_guard_dialog(r) else False
        )
    assert asked_about(events) == ["rm -f a.txt"]
    assert (world.project / "a.txt").exists() and (world.project / "b.txt").exists()
    stopped = [r["data"] for r in world.audit("confirmation.declined")]
    assert stopped and all(d["reason"] == "stopped" for d in stopped), stopped


def test_the_agent_cannot_write_itself_a_grant(
    world: World, model_server: ScriptedModelServer
) -> None:
    """Through every tool: the grants file is the guard's, and a forged line would only make
    the guard ask anyway."""
    prepare(world)
    grants = world.home / "grants.jsonl"
    forged = json.dumps({"type": "created", "sessionId": "x", "maxUses": 1000}) + "\n"
    calls = [
        ToolCall("write", {"path": str(grants), "content": forged}),
        ToolCall("edit", {"path": str(grants), "edits": [{"oldText": "a", "newText": "b"}]}),
        bash(f"printf '%s' '{forged.strip()}' >> {grants}"),
        bash(f"cp /dev/null {grants}; ls -la {world.home}"),
    ]
    model_server.add_scenario("grant-forge", [Turn(tool_calls=(c,)) for c in calls]
                              + [Turn(tool_calls=(bash("rm -f b.txt"),)), Turn(text="done")])  # fmt: skip
    with world.rpc() as pi:
        events = pi.prompt("scenario:grant-forge", grant_first, timeout=120)
    assert not grants.exists()  # nothing was ever granted, nothing written
    assert asked_about(events) == ["rm -f b.txt"]  # asked, not covered
    ends = tool_ends(events)
    assert [e["isError"] for e in ends[:2]] == [True, True], ends  # the file tools: blocked
    assert (world.project / "b.txt").exists()
    assert world.audit("grant.used") == []


def test_after_expiry_it_asks(world: World, model_server: ScriptedModelServer) -> None:
    """The shortest life a policy allows is a minute: waited out in the real pi."""
    prepare(world)
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text("[grants]\nmax_minutes = 1\n")
    model_server.add_scenario("grant-early", turns(bash("rm -f a.txt"), bash("rm -f b.txt")))
    model_server.add_scenario("grant-late", turns(bash("rm -f c.txt")))
    with world.rpc() as pi:
        early = pi.prompt("scenario:grant-early", grant_first, timeout=120)
        assert asked_about(early) == ["rm -f a.txt"]  # b.txt covered
        (created,) = [r["data"] for r in world.audit("grant.created")]
        expires = datetime.fromisoformat(created["expiresAtIso"].replace("Z", "+00:00"))
        time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 1)
        late = pi.prompt("scenario:grant-late", grant_first, timeout=120)
    assert asked_about(late) == ["rm -f c.txt"]
    assert (world.project / "c.txt").exists()
    expired = [(r["data"]["reason"], r["data"]["uses"]) for r in world.audit("grant.expired")]
    assert expired == [("time", 1)]
