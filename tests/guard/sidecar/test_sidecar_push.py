"""Another screen's answer is pushed to the shim (``approvals.answered``), never polled for.

A real sidecar process on pipes, as pi starts it: a second terminal answers over the
sidecar's socket, and the notification (a JSON-RPC message without an id) comes on the
sidecar's stdout at once, written whole between the replies. Only an accepted answer is
pushed: not pi's own dialog's (its reply says it), not a forged, stale or late one; and what
may run is still settled from the broker by the question's id.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._approvals import ask_local, sidecar_dirs

pytestmark = pytest.mark.integration

SERVE = """
import pathlib, sys
from guard._sidecar.handlers.methods import serve
sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, home=pathlib.Path(sys.argv[1])))
"""


class Served:
    """The sidecar as the shim sees it: requests on stdin, lines on stdout."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.home = home
        self.next_id = 0
        self.buffer = b""

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        return self.next_id

    def line(self, timeout: float = 20) -> tuple[dict[str, Any], float]:
        """The next message and when it was read (monotonic)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no line within {timeout} s"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the sidecar closed its stdout"
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(raw), time.monotonic()

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The reply to one request; a notification before it fails the test."""
        rid = self.send(method, params)
        message, _ = self.line()
        assert message.get("id") == rid, message
        return message

    def session_dir(self) -> Path:
        (directory,) = list(sidecar_dirs(self.home))
        return directory

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    made = Served(home)
    yield made
    if made.proc.poll() is None:
        made.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


def rm(project: Path, call_id: str = "c1", **more: Any) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(project),
            "toolCallId": call_id, **more}  # fmt: skip


def ask(served: Served, project: Path, call_id: str = "c1", **more: Any) -> dict[str, Any]:
    approval: dict[str, Any] = served.call("evaluate", rm(project, call_id, **more))["result"][
        "approval"
    ]
    return approval


def answer(approval: dict[str, Any], decision: str = "yes", **more: Any) -> dict[str, Any]:
    return {"op": "answer", "id": approval["id"], "digest": approval["digest"],
            "decision": decision, **more}  # fmt: skip


@pytest.mark.parametrize("decision", ["yes", "no"])
def test_a_second_terminals_answer_is_pushed_at_once(
    served: Served, project: Path, decision: str
) -> None:
    approval = ask(served, project)
    given = time.monotonic()
    assert ask_local(served.session_dir(), answer(approval, decision)) == {"outcome": "accepted"}
    pushed, heard = served.line()
    assert "id" not in pushed  # a notification: the shim answers nothing
    assert pushed["method"] == "approvals.answered"
    assert pushed["params"]["id"] == approval["id"]
    assert (pushed["params"]["answer"]["decision"], pushed["params"]["answer"]["approver"]) == (
        decision, "cli")  # fmt: skip
    assert heard - given < 0.3, f"pushed {1000 * (heard - given):.0f} ms after the answer"
    # Taken by its id: the sidecar settles from the broker, whatever the shim claims.
    recorded = served.call("record", {**rm(project), "confirmed": True,
                                      "approvalId": approval["id"]})  # fmt: skip
    if decision == "yes":
        assert recorded["result"]["decision"] == "recorded"
    else:
        assert recorded["error"]["data"]["reason"] == "not-approved"


def test_pi_dialogs_own_answer_is_its_reply_not_a_push(served: Served, project: Path) -> None:
    approval = ask(served, project)
    said = served.call("approvals.answer", {"id": approval["id"], "digest": approval["digest"],
                                            "decision": "no"})  # fmt: skip
    assert said["result"]["outcome"] == "accepted"
    assert served.call("ping")["result"] == {"pong": True}  # nothing came between


def test_approvals_poll_is_gone(served: Served, project: Path) -> None:
    approval = ask(served, project)
    refused = served.call("approvals.poll", {"id": approval["id"]})
    assert refused["error"]["data"]["reason"] == "unknown-method"


ATTACKS = {
    "another question's id": lambda a: answer({**a, "id": "apr_" + "A" * 20}),
    "what another screen was shown": lambda a: answer({**a, "digest": "sha256:" + "f" * 64}),
    "a grant the question does not offer": lambda a: answer(a, grant=1),
    "a grant with a no": lambda a: answer(a, "no", grant=0),
}


@pytest.mark.parametrize("what", sorted(ATTACKS))
def test_a_forged_answer_is_never_pushed(served: Served, project: Path, what: str) -> None:
    approval = ask(served, project)
    reply = ask_local(served.session_dir(), ATTACKS[what](approval))
    assert reply.get("outcome") != "accepted", reply
    assert served.call("ping")["result"] == {"pong": True}  # no push came first
    refused = served.call("record", {**rm(project), "confirmed": True,
                                     "approvalId": approval["id"]})  # fmt: skip
    assert refused["error"]["data"]["reason"] == "not-approved"


def test_an_answer_after_the_timeout_is_refused_and_never_pushed(
    served: Served, project: Path
) -> None:
    approval = ask(served, project, confirmTimeoutMs=200)
    time.sleep(0.4)
    assert ask_local(served.session_dir(), answer(approval)) == {"outcome": "expired"}
    assert served.call("ping")["result"] == {"pong": True}
    refused = served.call("record", {**rm(project), "confirmed": True,
                                     "approvalId": approval["id"]})  # fmt: skip
    assert refused["error"]["data"]["reason"] == "not-approved"


def test_pushes_and_replies_are_written_whole_one_at_a_time(served: Served, project: Path) -> None:
    """Answers from many threads at once while the loop answers requests: every line on
    stdout is one whole message (a torn line would be dropped by the shim: a lost answer)."""
    approvals = [ask(served, project, f"c{n}") for n in range(24)]
    directory = served.session_dir()

    def answer_some(some: list[dict[str, Any]]) -> None:  # a few terminals, each in turn
        for approval in some:
            assert ask_local(directory, answer(approval)) == {"outcome": "accepted"}

    threads = [threading.Thread(target=answer_some, args=(approvals[n::4],)) for n in range(4)]
    for thread in threads:
        thread.start()
    pings = [served.send("ping") for _ in range(200)]
    for thread in threads:
        thread.join(timeout=30)
    pushed: set[str] = set()
    replied: set[int] = set()
    while len(replied) < len(pings) or len(pushed) < len(approvals):
        message, _ = served.line()
        if "id" in message:
            assert message["result"] == {"pong": True}
            replied.add(message["id"])
        else:
            pushed.add(message["params"]["id"])
    assert pushed == {a["id"] for a in approvals}
    assert replied == set(pings)
