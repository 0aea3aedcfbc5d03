"""The approval port through the sidecar: a second terminal answers over the sidecar's socket,
the first answer wins, the record names who answered, and every refused answer is audited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._approvals import ask_local
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import error, records, result

pytestmark = pytest.mark.integration


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Sidecar]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    sidecar = Sidecar(home)
    yield sidecar
    sidecar.close()


def rm(project: Path, call_id: str = "c1") -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(project),
            "toolCallId": call_id}  # fmt: skip


def local(server: Sidecar, request: dict[str, Any]) -> dict[str, Any]:
    return ask_local(server.session.session_dir, request)


def test_a_second_terminal_answers_and_the_record_names_it(server: Sidecar, project: Path) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    (listed,) = local(server, {"op": "list"})["pending"]
    assert (listed["id"], listed["digest"], listed["toolCallId"]) == (
        approval["id"], approval["digest"], "c1")  # fmt: skip
    assert "rm -rf build" in listed["message"] and "Payload:" in listed["details"]
    answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"], "decision": "yes"}
    assert local(server, answer) == {"outcome": "accepted"}
    asked = server.session.desk.broker.result(approval["id"])
    assert asked is not None and asked.answer is not None and asked.answer.approver == "cli"
    # pi's dialog answered too late: the terminal's answer stands (and the loss is audited).
    late = {"id": approval["id"], "digest": approval["digest"], "decision": "no"}
    said = result(server, "approvals.answer", late)
    assert said["outcome"] == "already-answered" and said["answer"]["decision"] == "yes"
    recorded = result(server, "record", {**rm(project), "confirmed": True,
                                         "approvalId": approval["id"]})  # fmt: skip
    assert recorded["decision"] == "recorded"
    assert recorded["envelope"]["details"]["approver"] == "cli"  # signed into the evidence
    (data,) = records(server.home, "confirmation.recorded")
    assert data["approver"] == "cli"
    assert [r["reason"] for r in records(server.home, "approval.refused")] == ["already-answered"]
    assert local(server, {"op": "list"})["pending"] == []


def test_a_yes_no_screen_gave_is_refused(server: Sidecar, project: Path) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    refused = error(server, "record", {**rm(project), "confirmed": True,
                                       "approvalId": approval["id"]})  # fmt: skip
    assert refused["data"]["reason"] == "not-approved"
    assert records(server.home, "confirmation.recorded") == []
    approval = result(server, "evaluate", rm(project, "c2"))["approval"]
    no = {"op": "answer", "id": approval["id"], "digest": approval["digest"], "decision": "no",
          "reason": "use git clean -n"}  # fmt: skip
    assert local(server, no) == {"outcome": "accepted"}
    refused = error(server, "record", {**rm(project, "c2"), "confirmed": True,
                                       "approvalId": approval["id"]})  # fmt: skip
    assert refused["data"]["reason"] == "not-approved"
    declined = result(server, "audit.declined", {**rm(project, "c2"), "reason": "declined",
                                                 "operatorReason": "use git clean -n",
                                                 "approvalId": approval["id"]})  # fmt: skip
    assert "use git clean -n" in declined["blockReason"]
    (data,) = records(server.home, "confirmation.declined")
    assert data["approver"] == "cli"


def test_pi_dialog_first_then_the_terminal_loses(server: Sidecar, project: Path) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    first = {"id": approval["id"], "digest": approval["digest"], "decision": "yes"}
    assert result(server, "approvals.answer", first)["outcome"] == "accepted"
    answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"], "decision": "no"}
    assert local(server, answer) == {"outcome": "already-answered"}
    result(server, "record", {**rm(project), "confirmed": True, "approvalId": approval["id"]})
    assert records(server.home, "confirmation.recorded")[0]["approver"] == "pi-dialog"
    assert [r["approver"] for r in records(server.home, "approval.refused")] == ["cli"]


ATTACKS = {
    "another question's id": lambda a: {**a, "id": "apr_" + "A" * 20},
    "what another screen was shown": lambda a: {**a, "digest": "sha256:" + "f" * 64},
    "no digest": lambda a: {k: v for k, v in a.items() if k != "digest"},
    "not an answer": lambda a: {**a, "decision": "maybe"},
}


@pytest.mark.parametrize("what", sorted(ATTACKS))
def test_a_forged_or_stale_answer_is_refused_and_audited(
    server: Sidecar, project: Path, what: str
) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"], "decision": "yes"}
    reply = local(server, ATTACKS[what](answer))
    assert reply.get("outcome") != "accepted", reply
    assert server.session.desk.broker.state(approval["id"]) == "open"
    server.session.desk.audit_refused()  # what the listener refused, on this thread
    if "outcome" in reply:  # a well-formed answer that lost: audited with its reason
        assert [r["reason"] for r in records(server.home, "approval.refused")] == [reply["outcome"]]


def test_a_replayed_answer_is_refused(server: Sidecar, project: Path) -> None:
    approval = result(server, "evaluate", rm(project))["approval"]
    answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"], "decision": "yes"}
    assert local(server, answer) == {"outcome": "accepted"}
    result(server, "record", {**rm(project), "confirmed": True, "approvalId": approval["id"]})
    assert local(server, answer) == {"outcome": "unknown-id"}  # closed once recorded
    assert server.session.desk.broker.result(approval["id"]) is None
    server.session.desk.audit_refused()  # what the listener refused, on this thread
    assert [r["reason"] for r in records(server.home, "approval.refused")] == ["unknown-id"]


def test_a_stopping_sidecar_withdraws_every_question(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    server = Sidecar(home)
    approval = result(server, "evaluate", rm(project))["approval"]
    directory = server.session.session_dir
    server.close()
    assert not (directory / "approvals.sock").exists()
    with pytest.raises(OSError):
        ask_local(directory, {"op": "answer", "id": approval["id"], "digest": approval["digest"],
                              "decision": "yes"})  # fmt: skip


def test_without_a_ui_a_call_blocks_unless_the_user_policy_waits(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    no_ui = {**rm(project), "hasUi": False}
    # A project file cannot make calls wait (only the user's file says where answers come from).
    (project / ".pi").mkdir()
    (project / ".pi" / "operator-guard.toml").write_text('[approvals]\nheadless = "wait"\n')
    server = Sidecar(home)
    try:
        assert result(server, "evaluate", no_ui)["action"] == "block"
    finally:
        server.close()
    (home / "operator-guard.toml").write_text('[approvals]\nheadless = "wait"\n')
    server = Sidecar(home)
    try:
        reply = result(server, "evaluate", {**no_ui, "toolCallId": "c2"})
        assert reply["action"] == "wait" and reply["dialog"] is None
        approval = reply["approval"]
        assert f"pi-guard approvals approve {approval['id']}" in reply["waitNotice"]
        (listed,) = local(server, {"op": "list"})["pending"]
        assert listed["id"] == approval["id"]
        answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"],
                  "decision": "yes"}  # fmt: skip
        assert local(server, answer) == {"outcome": "accepted"}
        recorded = result(server, "record", {**rm(project, "c2"), "confirmed": True,
                                             "approvalId": approval["id"]})  # fmt: skip
        assert recorded["decision"] == "recorded"
    finally:
        server.close()
    data = records(home, "confirmation.recorded")
    assert [d["approver"] for d in data] == ["cli"]
    assert [d["reason"] for d in records(home, "confirmation.declined")] == ["no-ui"]


def test_the_page_starts_with_the_session_when_the_user_policy_says_so(
    tmp_path: Path, project: Path
) -> None:
    import http.client
    from urllib.parse import urlsplit

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text('[approvals]\nheadless = "wait"\npage = true\n')
    server = Sidecar(home)
    try:
        result(server, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "print"})
        footer = result(server, "health")["statusText"]
        assert "approvals at http://localhost:" in footer and "token" not in footer
        shown = result(server, "status")["text"]
        (line,) = [ln for ln in shown.splitlines() if ln.startswith("  approvals:")]
        login = urlsplit(line.split()[1])
        conn = http.client.HTTPConnection("127.0.0.1", login.port, timeout=10)
        conn.request("GET", f"{login.path}?{login.query}")
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 303  # the operator's one-time login works
        conn.request("GET", "/api/pending")  # no cookie: the agent's view
        refused = conn.getresponse()
        refused.read()
        assert refused.status == 401
        conn.close()
        waiting = result(server, "evaluate", {**rm(project), "hasUi": False})
        assert "/login?token=" in waiting["waitNotice"]
        assert server.session.desk.broker.state(waiting["approval"]["id"]) == "open"
        server.session.desk.audit_refused()  # what the page refused, on this thread
    finally:
        server.close()
    audited = [(r["reason"], r["approver"]) for r in records(home, "approval.refused")]
    assert audited == [("no-session", "web")]


def test_a_flood_of_refused_answers_is_a_few_records_and_none_is_lost(
    tmp_path: Path, project: Path
) -> None:
    """Thousands of bad answers (a command that found the socket or the page) become one
    record per kind with its count, written even when the sidecar stops right after."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    server = Sidecar(home)
    approval = result(server, "evaluate", rm(project))["approval"]
    stale = {"op": "answer", "id": approval["id"], "digest": "sha256:" + "0" * 64,
             "decision": "yes"}  # fmt: skip
    for n in range(600):
        bogus = f"apr_{n:0>22}"
        assert local(server, {**stale, "id": bogus})["outcome"] == "unknown-id"
        assert local(server, stale)["outcome"] == "stale"
    server.close()  # the sidecar stops with every refusal still queued
    refused = records(home, "approval.refused")
    assert len(refused) <= 70
    by_reason: dict[str, int] = {}
    for record in refused:
        by_reason[record["reason"]] = by_reason.get(record["reason"], 0) + record.get("count", 1)
    assert by_reason == {"unknown-id": 600, "stale": 600}
