"""The approval port in the real pi (both pinned versions): a question answered from a second
terminal closes the pi dialog and counts as that terminal's answer; the agent cannot answer."""

from __future__ import annotations

import http.client
import json
import subprocess
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

from guard._approvals import ask_local, sidecar_dirs
from guard._approvals.web import ApprovalPage
from tools.pi.harness import is_effects_dialog, is_guard_dialog
from tools.pi.scripted_model import ScriptedModelServer, Turn

from .pi_world import MODEL_ID, PROVIDER, World, bash, confirms, result_text, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def from_terminal(world: World, verb: str, *extra: str) -> Any:
    """Answer the open dialog from a second terminal (``pi-guard approvals``), not in pi."""

    def answer(request: Mapping[str, Any]) -> None:
        if not is_guard_dialog(request):
            return None
        (pending,) = json.loads(world.cli("approvals", "list", "--json").stdout)
        done = world.cli("approvals", verb, pending["id"], *extra)
        assert done.returncode == 0, done.stderr
        return None  # pi's own dialog is left open: the guard closes it

    return answer


def test_approved_from_a_second_terminal(world: World) -> None:
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", from_terminal(world, "approve"), timeout=60)
    assert len(confirms(events)) == 1
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert not (world.project / "build").exists()
    (recorded,) = [r["data"] for r in world.audit("confirmation.recorded")]
    assert recorded["approver"] == "cli"
    (envelope,) = world.envelopes()
    assert world.consume(envelope, "rm -rf build").returncode == 0


@pytest.mark.every_pi
def test_a_second_terminals_answer_closes_the_pi_dialog_at_once(world: World) -> None:
    """Nothing polls: the sidecar pushes the answer the moment the broker takes it, and the
    pi dialog closes (the guard's "answered yes from cli" notice follows it) well under the
    300 ms the shim's old poll could take."""
    given: list[float] = []
    heard: list[float] = []

    def answer(request: Mapping[str, Any]) -> None:
        if not is_guard_dialog(request):
            return None
        (directory,) = sidecar_dirs(world.home)
        (pending,) = ask_local(directory, {"op": "list"})["pending"]
        given.append(time.monotonic())
        said = {"op": "answer", "id": pending["id"], "digest": pending["digest"], "decision": "yes"}
        assert ask_local(directory, said) == {"outcome": "accepted"}
        return None  # pi's own dialog is left open: the guard closes it

    def on_event(event: Mapping[str, Any]) -> None:
        if event.get("method") == "notify" and "answered yes from cli" in str(event.get("message")):
            heard.append(time.monotonic())

    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", answer, timeout=60, on_event=on_event)
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert not (world.project / "build").exists()
    assert len(given) == len(heard) == 1
    print(
        f"answered from the second terminal; pi's dialog closed {1000 * (heard[0] - given[0]):.0f} ms later"
    )
    assert heard[0] - given[0] < 0.3, (
        f"the dialog closed {1000 * (heard[0] - given[0]):.0f} ms later"
    )


def test_declined_from_a_second_terminal_with_a_reason(world: World) -> None:
    answer = from_terminal(world, "decline", "--reason", "use git clean -n first")
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-build", answer, timeout=60)
    (end,) = tool_ends(events)
    assert end["isError"] is True
    assert "use git clean -n first" in result_text(end)
    assert (world.project / "build" / "keep.txt").exists()
    (declined,) = [r["data"] for r in world.audit("confirmation.declined")]
    assert (declined["reason"], declined["approver"]) == ("declined", "cli")


def test_the_pi_dialog_answers_first_and_the_terminal_loses(world: World) -> None:
    seen: list[str] = []

    def answer(request: Mapping[str, Any]) -> bool | None:
        if is_guard_dialog(request):
            (pending,) = json.loads(world.cli("approvals", "list", "--json").stdout)
            seen.append(pending["id"])
            return True
        return None

    with world.rpc() as pi:
        pi.prompt("scenario:rm-build", answer, timeout=60)
    late = world.cli("approvals", "decline", seen[0])
    assert late.returncode in (2, 3), late.stderr  # answered already: nothing to decline
    (recorded,) = [r["data"] for r in world.audit("confirmation.recorded")]
    assert recorded["approver"] == "pi-dialog"
    assert not (world.project / "build").exists()


def test_two_sessions_answered_out_of_order(
    world: World, model_server: ScriptedModelServer
) -> None:
    model_server.add_scenario("approve-a", turns(bash("rm -rf a")))
    model_server.add_scenario("approve-b", turns(bash("rm -rf b")))
    with world.rpc() as first, world.rpc() as second:
        # The first session's dialog waits while the second's is answered from the terminal.
        first.send({"id": "pa", "type": "prompt", "message": "scenario:approve-a"})
        first.wait_for(lambda events: any(is_guard_dialog(e) for e in events), timeout=60)
        second.prompt("scenario:approve-b", from_terminal_for(world, "rm -rf b"), timeout=60)
        assert not (world.project / "b").exists() and (world.project / "a").exists()
        from_terminal_for(world, "rm -rf a")({"title": "operator-guard: allow "})
        first.wait_for(lambda events: any(e.get("type") == "agent_end" for e in events),
                       timeout=60)  # fmt: skip
    assert not (world.project / "a").exists()
    approvers = [r["data"]["approver"] for r in world.audit("confirmation.recorded")]
    assert approvers == ["cli", "cli"]


def from_terminal_for(world: World, command: str) -> Any:
    """Approve, from a second terminal, the one pending question about ``command``."""

    def answer(request: Mapping[str, Any]) -> None:
        if not is_guard_dialog(request):
            return None
        listed = json.loads(world.cli("approvals", "list", "--json").stdout)
        (pending,) = [p for p in listed if command in p["message"]]
        done = world.cli("approvals", "approve", pending["id"])
        assert done.returncode == 0, done.stderr
        return None

    return answer


def test_the_agent_cannot_answer_its_own_question(
    world: World, model_server: ScriptedModelServer
) -> None:
    """From its sandboxed bash the agent reaches neither the CLI nor the socket; each try is
    blocked or fails, and the dialog stays the operator's."""
    sessions = world.home / "sessions"
    tries = [
        "pi-guard approvals approve $(pi-guard approvals list --json | head -c 40)",
        "python3 -m guard approvals list",
        f"ls {sessions}; cat {sessions}/*/approvals.sock",
        f'python3 -c "import socket,glob;s=socket.socket(socket.AF_UNIX);'
        f"s.connect(glob.glob('{sessions}/*/approvals.sock')[0]);print('REACH'+'ED')\"",
    ]
    model_server.add_scenario(
        "approve-self",
        [Turn(tool_calls=(bash(t),)) for t in tries] + turns(bash("rm -rf build")),
    )
    with world.rpc() as pi:
        events = pi.prompt("scenario:approve-self", lambda r: False if is_guard_dialog(r) else None,
                           timeout=90)  # fmt: skip
    ends = tool_ends(events)
    assert len(ends) == len(tries) + 1, [result_text(e) for e in ends]
    assert all("REACHED" not in result_text(e) for e in ends), [result_text(e) for e in ends]
    assert (world.project / "build" / "keep.txt").exists()
    assert world.audit("confirmation.recorded") == []


@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("screen", ["terminal", "page"])
@pytest.mark.every_pi
def test_print_mode_waits_for_the_answer_from_another_screen(world: World, screen: str) -> None:
    """``pi -p`` has no UI; with ``[approvals] headless = "wait"`` its call waits, says on
    stderr where to answer, and runs once the operator approves from the CLI or the page."""
    world.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (world.home / "operator-guard.toml").write_text('[approvals]\nheadless = "wait"\n')
    run = subprocess.Popen(
        world.pi.command(
            "-p", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session", "scenario:rm-build"
        ),
        cwd=world.project,
        env=world.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        listed: list[dict[str, Any]] = []
        while not listed and time.monotonic() < deadline:
            time.sleep(0.3)
            listed = json.loads(world.cli("approvals", "list", "--json").stdout or "[]")
        (pending,) = listed
        if screen == "terminal":
            assert world.cli("approvals", "approve", pending["id"]).returncode == 0
        else:
            page = ApprovalPage(world.home)
            page.start()
            try:
                answer_on_the_page(page, pending)
            finally:
                page.close()
        out, err = run.communicate(timeout=90)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err[-2000:]
    assert f"pi-guard approvals approve {pending['id']}" in err  # the operator's stderr
    assert "pi-guard approvals" not in out
    assert not (world.project / "build").exists()
    (recorded,) = [r["data"] for r in world.audit("confirmation.recorded")]
    assert recorded["approver"] == ("cli" if screen == "terminal" else "web")


def answer_on_the_page(page: ApprovalPage, pending: dict[str, Any]) -> None:
    """Log in with the one-time address and answer Yes, as the page's script does."""
    login = urlsplit(page.login_url)
    conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    conn.request("GET", f"{login.path}?{login.query}")
    reply = conn.getresponse()
    reply.read()
    cookie = str(reply.getheader("Set-Cookie")).split(";")[0]
    conn.request("GET", "/api/pending", headers={"Cookie": cookie})
    listing = json.loads(conn.getresponse().read())
    body = {"sidecar": pending["sidecar"], "id": pending["id"], "digest": pending["digest"],
            "decision": "yes"}  # fmt: skip
    headers = {"Cookie": cookie, "X-CSRF-Token": listing["csrf"], "Content-Type": "application/json",
               "Origin": f"http://127.0.0.1:{page.port}"}  # fmt: skip
    conn.request("POST", "/api/answer", body=json.dumps(body), headers=headers)
    assert json.loads(conn.getresponse().read()) == {"outcome": "accepted"}
    conn.close()


def test_the_agents_command_cannot_use_the_page(
    world: World, model_server: ScriptedModelServer
) -> None:
    """The page listens on the host's loopback, which the agent's commands share (network
    open): without the operator's token they list nothing and answer nothing, each try is
    audited as the sandbox's, and wrong tokens from there never lock the operator out."""
    page = ApprovalPage(world.home, on_refused=lambda why, _id: refused.append(why))
    refused: list[str] = []
    page.start()
    login = urlsplit(page.login_url)  # printed to the operator's terminal
    base = f"http://127.0.0.1:{page.port}"
    tries = [
        f"curl -s -o /dev/null -w '%{{http_code}}\\n' {base}/api/pending",
        f"curl -s -o /dev/null -w '%{{http_code}}\\n' '{base}/login?token=guess'",
        f"curl -s -o /dev/null -w '%{{http_code}}\\n' -H 'Host: evil.example' {base}/",
        f"curl -s -o /dev/null -w '%{{http_code}}\\n' -X POST -H 'Origin: http://evil.example'"
        f" -H 'Content-Type: application/json' -d '{{}}' {base}/api/answer",
        "curl -s"
        + "".join(f" -o /dev/null '{base}/login?token=g{i}'" for i in range(8))
        + "; echo tried",
    ]
    model_server.add_scenario(
        "page-attack",
        [Turn(tool_calls=(bash(t),)) for t in tries] + turns(bash("rm -rf build")),
    )
    try:
        with world.rpc() as pi:
            events = pi.prompt(
                "scenario:page-attack",
                lambda r: False if is_guard_dialog(r) else None,
                timeout=90,
            )
        conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
        conn.request("GET", f"{login.path}?{login.query}", headers={"Host": login.netloc})
        assert conn.getresponse().status == 303  # the operator's login still works
        conn.close()
    finally:
        page.close()
    codes = [result_text(e).strip() for e in tool_ends(events)[: len(tries)]]
    assert codes == ["401", "403", "421", "403", "tried"], codes
    # each refusal names the sandbox the request came from, whatever it was refused for
    assert refused == ["sandboxed-peer"] * (4 + 8)
    assert (world.project / "build" / "keep.txt").exists()
    assert world.audit("confirmation.recorded") == []


def test_held_effects_are_answered_from_a_second_terminal(
    world: World, model_server: ScriptedModelServer
) -> None:
    """What a command did that loses work is held; the held effects are the same question on
    every screen: applied here from the CLI, the pi dialog closes."""
    model_server.add_scenario("effects-cli", turns(bash("cmake -E rm -rf build")))

    def answer(request: Mapping[str, Any]) -> bool | None:
        if is_effects_dialog(request):
            (pending,) = json.loads(world.cli("approvals", "list", "--json").stdout)
            assert pending["kind"] == "effects"
            done = world.cli("approvals", "approve", pending["id"])
            assert done.returncode == 0, done.stderr
            return None  # the pi dialog is left open: the guard closes it
        return True  # the call's own dialog, if any: yes

    with world.rpc() as pi:
        events = pi.prompt("scenario:effects-cli", answer, timeout=90)
    (end,) = tool_ends(events)
    assert "[reason: effects-discarded]" not in result_text(end), result_text(end)
    assert not (world.project / "build").exists()
    (resolved,) = [r["data"] for r in world.audit("effects.resolved")]
    assert (resolved["decision"], resolved["approver"]) == ("applied", "cli")


def test_answered_on_the_page_the_pi_dialog_closes(world: World) -> None:
    page = ApprovalPage(world.home)
    page.start()

    def answer(request: Mapping[str, Any]) -> None:
        if is_guard_dialog(request):
            (pending,) = json.loads(world.cli("approvals", "list", "--json").stdout)
            answer_on_the_page(page, pending)
        return None  # pi's dialog is left open: the guard closes it

    try:
        with world.rpc() as pi:
            events = pi.prompt("scenario:rm-build", answer, timeout=60)
    finally:
        page.close()
    (end,) = tool_ends(events)
    assert end["isError"] is False, result_text(end)
    assert not (world.project / "build").exists()
    (recorded,) = [r["data"] for r in world.audit("confirmation.recorded")]
    assert recorded["approver"] == "web"


def test_a_grant_chosen_from_a_second_terminal_covers_the_next_call(
    world: World, model_server: ScriptedModelServer
) -> None:
    for name in ("a.txt", "b.txt"):
        (world.project / name).write_text(name)
    model_server.add_scenario("grant-cli", turns(bash("rm -f a.txt"), bash("rm -f b.txt")))

    def answer(request: Mapping[str, Any]) -> None:
        if is_guard_dialog(request):
            (pending,) = json.loads(world.cli("approvals", "list", "--json").stdout)
            assert len(pending["grants"]) == 2
            done = world.cli("approvals", "approve", pending["id"], "--grant", "1")
            assert done.returncode == 0, done.stderr
        return None

    with world.rpc() as pi:
        events = pi.prompt("scenario:grant-cli", answer, timeout=90)
    assert len(confirms(events)) == 1  # b.txt: covered by the grant chosen from the terminal
    assert not (world.project / "a.txt").exists() and not (world.project / "b.txt").exists()
    (created,) = [r["data"] for r in world.audit("grant.created")]
    assert created["breadth"] == "same-directory"
    assert [r["data"]["use"] for r in world.audit("grant.used")] == [1]
