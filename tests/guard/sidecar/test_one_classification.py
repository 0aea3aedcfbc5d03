"""One classification per request: the sidecar judges a call once when the request arrives
and every verb of that request (ask, answer, settle, decline, executed, consume) uses that
judgement; a later request judges the call afresh from its own input (never from an earlier
answer or the client's word). The policy cache's ``classify`` is counted per request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._policy import PolicyCache
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import result

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]


class Counted:
    """How many times the policy cache classified a call, request by request."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, str]] = []
        original = PolicyCache.classify

        def counting(cache: PolicyCache, name: str, tool_input: Any, cwd: Any) -> Any:
            self.calls.append((name, str(tool_input.get("command", ""))))
            return original(cache, name, tool_input, cwd)

        monkeypatch.setattr(PolicyCache, "classify", counting)

    def request(self, server: Sidecar, method: str, params: dict[str, Any]) -> Any:
        """Send one request; fail if it classified the call more than once."""
        self.calls.clear()
        reply = result(server, method, params)
        assert len(self.calls) <= 1, (method, self.calls)
        return reply


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (root / name).write_text(name)
    return root


@pytest.fixture
def server(tmp_path: Path, project: Path) -> Iterator[Sidecar]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    sidecar = Sidecar(home)
    # A pi session (grants are offered) whose sandbox does not review effects: every
    # destructive call is asked.
    result(sidecar, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "tui"})
    yield sidecar
    sidecar.close()


def bash(project: Path, command: str, call_id: str) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": command}, "cwd": str(project),
            "toolCallId": call_id}  # fmt: skip


def test_an_asked_call_is_classified_once_per_request(
    server: Sidecar, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Counted(monkeypatch)
    call = bash(project, "rm -f a.txt", "c1")
    asked = counted.request(server, "evaluate", call)
    assert asked["action"] == "confirm" and len(counted.calls) == 1
    assert asked["dialog"]["choices"]["grants"]  # the offers were derived from that judgement
    approval = asked["approval"]
    answer = {"id": approval["id"], "digest": approval["digest"], "decision": "yes", "grant": 1}
    assert counted.request(server, "approvals.answer", answer)["outcome"] == "accepted"
    said = counted.request(
        server, "record", {**call, "confirmed": True, "approvalId": approval["id"], "grant": 1}
    )
    assert said["decision"] == "recorded" and said["grant"] is not None
    assert len(counted.calls) == 1  # afresh: the policy may have changed since the ask
    consumed = counted.request(server, "consume", {**call, "envelope": said["envelope"]})
    assert consumed["decision"] == "consumed" and len(counted.calls) == 1
    ran = counted.request(server, "audit.toolExecuted", {**call, "isError": False})
    assert ran == {"audited": True} and len(counted.calls) == 1
    # The grant kept covers the next call: judged once, its evidence minted on that judgement.
    covered = counted.request(server, "evaluate", bash(project, "rm -f b.txt", "c2"))
    assert covered["action"] == "allow" and covered["covered"] is not None
    assert len(counted.calls) == 1


def test_an_allowed_call_is_classified_once_per_request(
    server: Sidecar, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Counted(monkeypatch)
    call = bash(project, "cat a.txt", "c1")
    allowed = counted.request(server, "evaluate", call)
    assert allowed["action"] == "allow" and len(counted.calls) == 1
    ran = counted.request(server, "audit.toolExecuted", {**call, "isError": False})
    assert ran == {"audited": True} and len(counted.calls) == 1


def test_a_declined_or_blocked_call_is_classified_once_per_request(
    server: Sidecar, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Counted(monkeypatch)
    call = bash(project, "rm -f c.txt", "c1")
    approval = counted.request(server, "evaluate", call)["approval"]
    answer = {"id": approval["id"], "digest": approval["digest"], "decision": "no"}
    counted.request(server, "approvals.answer", answer)
    declined = counted.request(
        server, "audit.declined", {**call, "reason": "declined", "approvalId": approval["id"]}
    )
    assert declined["record"]["decision"] == "declined" and len(counted.calls) == 1
    stopped = counted.request(
        server, "audit.declined", {**bash(project, "cat d.txt", "c2"), "reason": "stopped"}
    )
    assert stopped["record"]["decision"] == "invalid" and len(counted.calls) == 1
    changed = {**bash(project, "rm -f d.txt", "c3"), "reason": "input-changed-after-decision"}
    assert counted.request(server, "audit.declined", changed)["audited"] is True
    assert len(counted.calls) == 1
    blocked = counted.request(server, "evaluate", bash(project, "rm -rf /", "c4"))
    assert blocked["action"] == "block" and len(counted.calls) == 1
    headless = counted.request(
        server, "evaluate", {**bash(project, "rm -f d.txt", "c5"), "hasUi": False}
    )
    assert headless["action"] == "block" and len(counted.calls) == 1
