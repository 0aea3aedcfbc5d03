"""Grants through the sidecar, attacked as a hostile shim or model would: a grant exists only
when the operator chose one the dialog offered for exactly that call, and covers nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import error, records, result

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "sub").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt", "sub/d.txt", ".env.example"):
        (root / name).write_text(name)
    return root


@pytest.fixture
def server(tmp_path: Path, project: Path) -> Iterator[Sidecar]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    sidecar = Sidecar(home)
    result(sidecar, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "tui"})
    yield sidecar
    sidecar.close()


def bash(project: Path, command: str, call_id: str) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": command}, "cwd": str(project),
            "toolCallId": call_id}  # fmt: skip


def ask(server: Sidecar, params: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = result(server, "evaluate", params)
    return reply


def test_the_chosen_grant_covers_later_calls_with_their_own_evidence(
    server: Sidecar, project: Path
) -> None:
    first = bash(project, "rm -f a.txt", "c1")
    offered = ask(server, first)["dialog"]["choices"]["grants"]
    assert len(offered) == 2 and "./*.txt" in offered[1]
    said = result(server, "record", {**first, "confirmed": True, "grant": 1})
    assert said["grant"]["grantId"].startswith("grant_")
    reply = ask(server, bash(project, "rm -f b.txt", "c2"))
    assert reply["action"] == "allow"
    assert reply["covered"]["grantId"] == said["grant"]["grantId"]
    details = reply["record"]["envelope"]["details"]
    assert details["origin"] == "runtime-grant" and details["toolCallId"] == "c2"
    assert details["coveredBy"]["grantEvidenceId"] == said["evidenceId"]


def test_a_grant_the_dialog_did_not_offer_is_never_kept(server: Sidecar, project: Path) -> None:
    # No evaluate first: nothing was shown, so nothing can be chosen.
    said = result(server, "record", {**bash(project, "rm -f a.txt", "c1"), "confirmed": True,
                                     "grant": 1})  # fmt: skip
    assert said["decision"] == "recorded" and said["grant"] is None
    # A compound command gets no grant offer; choosing one anyway keeps none.
    compound = bash(project, "rm -f a.txt; rm -f b.txt", "c2")
    assert ask(server, compound)["dialog"]["choices"]["grants"] == []
    said = result(server, "record", {**compound, "confirmed": True, "grant": 0})
    assert said["grant"] is None
    # Another call's offer: the dialog was about a.txt, the record names c.txt.
    ask(server, bash(project, "rm -f a.txt", "c3"))
    said = result(server, "record", {**bash(project, "rm -f sub/d.txt", "c3"), "confirmed": True,
                                     "grant": 1})  # fmt: skip
    assert said["grant"] is None
    # A declined call keeps no grant, and the offer is gone once answered.
    asked = bash(project, "rm -f a.txt", "c4")
    ask(server, asked)
    said = result(server, "record", {**asked, "confirmed": False, "grant": 1})
    assert said["decision"] == "declined" and said["grant"] is None
    said = result(server, "record", {**asked, "confirmed": True, "grant": 1})
    assert said["grant"] is None
    assert records(server.home, "grant.created") == []
    assert ask(server, bash(project, "rm -f b.txt", "c5"))["action"] == "confirm"


@pytest.mark.parametrize("grant", [2, -1, "1", 1.0, True])
def test_a_grant_number_out_of_range_or_not_an_integer_is_refused(
    server: Sidecar, project: Path, grant: object
) -> None:
    asked = bash(project, "rm -f a.txt", "c1")
    ask(server, asked)
    refused = error(server, "record", {**asked, "confirmed": True, "grant": grant})
    assert refused["data"]["reason"] == "invalid-params", refused
    assert records(server.home, "grant.created") == []


NEAR_MISSES = [
    "rm -f b.txt sub/d.txt",
    "rm -f b.txt | cat",
    "rm -f $(printf b.txt)",
    "rm -f `echo b.txt`",
    "rm -f b.txt && rm -f c.txt",
    "rm -f b.txt > /dev/null",
    "rm -rf b.txt",
    "rm -f -v b.txt",
    "command rm -f b.txt",
    "env rm -f b.txt",
    "sudo rm -f b.txt",
    "/bin/rm -f b.txt",
    "rm -f ./*.txt",
    "rm -f b?txt",
    "rm -f link.txt",
    "bash -c 'rm -f b.txt'",
    "eval rm -f b.txt",
    "xargs rm -f <<< b.txt",
    "find . -name b.txt -delete",
    "cd sub && rm -f d.txt",
    "rm -f ../project/b.txt ~/x.txt",
]


@pytest.mark.parametrize("command", NEAR_MISSES)
def test_a_near_miss_is_never_covered(
    server: Sidecar, project: Path, tmp_path: Path, command: str
) -> None:
    (tmp_path / "outside.txt").write_text("outside")
    (project / "link.txt").symlink_to(tmp_path / "outside.txt")
    first = bash(project, "rm -f a.txt", "c1")
    ask(server, first)
    result(server, "record", {**first, "confirmed": True, "grant": 1})
    reply = ask(server, bash(project, command, "c2"))
    assert reply["action"] in ("confirm", "block"), reply
    assert reply.get("covered") is None and reply.get("record") is None
    assert records(server.home, "grant.used") == []


# tests/e2e/test_grants_e2e.py keeps two of these through the real pi; every one runs here.
E2E_NEAR_MISSES = {
    "a target outside the glob": "rm -f b.txt e.log",
    "a second command that the policy blocks": "rm -f b.txt; rm -rf ~",
    "a pipe": "rm -f b.txt | cat",
    "a substitution": "rm -f $(echo b.txt)",
    "a second command": "rm -f b.txt; rm -f c.txt",
    "another flag": "rm -rf b.txt",
    "a link inside the glob to a file outside it": "rm -f link.txt",
}


@pytest.mark.parametrize("what", sorted(E2E_NEAR_MISSES))
def test_an_end_to_end_near_miss_still_asks(
    server: Sidecar, project: Path, tmp_path: Path, what: str
) -> None:
    """As the real pi's: the grant on ``./*.txt`` kept at the first dialog; the near miss asks
    (or the policy blocks it outright), and is never covered."""
    (project / "e.log").write_text("e.log")
    (tmp_path / "outside.txt").write_text("not the workspace's")
    (project / "link.txt").symlink_to(tmp_path / "outside.txt")
    first = bash(project, "rm -f a.txt", "c1")
    ask(server, first)
    assert result(server, "record", {**first, "confirmed": True, "grant": 1})["grant"]
    command = E2E_NEAR_MISSES[what]
    reply = ask(server, bash(project, command, "c2"))
    assert reply["action"] == ("block" if "rm -rf ~" in command else "confirm"), reply
    assert reply.get("covered") is None and reply.get("record") is None
    assert records(server.home, "grant.used") == []


def test_a_file_tool_grant_covers_only_its_own_tool_and_directory(
    server: Sidecar, project: Path
) -> None:
    write = {"toolName": "write", "input": {"path": ".env.example", "content": "A=1\n"},
             "cwd": str(project), "toolCallId": "w1"}  # fmt: skip
    offered = ask(server, write)["dialog"]["choices"]["grants"]
    assert offered, "a protected write in the workspace offers a grant"
    result(server, "record", {**write, "confirmed": True, "grant": len(offered) - 1})
    again = {**write, "input": {"path": ".env.example", "content": "A=2\n"}, "toolCallId": "w2"}
    assert ask(server, again)["action"] == "allow"
    edit = {**write, "toolName": "edit", "toolCallId": "w3",
            "input": {"path": ".env.example", "edits": [{"oldText": "A", "newText": "B"}]}}  # fmt: skip
    assert ask(server, edit).get("covered") is None
    env = {**write, "input": {"path": ".env", "content": "T=stolen\n"}, "toolCallId": "w4"}
    assert ask(server, env).get("covered") is None


def test_grants_list_and_revoke_through_the_sidecar(server: Sidecar, project: Path) -> None:
    first = bash(project, "rm -f a.txt", "c1")
    ask(server, first)
    grant_id = result(server, "record", {**first, "confirmed": True, "grant": 1})["grant"][
        "grantId"
    ]
    listed = result(server, "grants.list")
    assert [g["grantId"] for g in listed["grants"]] == [grant_id]
    assert grant_id in listed["text"] and "20 uses left" in listed["text"]
    assert error(server, "grants.revoke", {"grantId": "grant_" + "x" * 22})["data"]["reason"] == (
        "unknown-grant"
    )
    assert error(server, "grants.revoke", {})["data"]["reason"] == "invalid-params"
    assert result(server, "grants.revoke", {"grantId": grant_id})["revoked"] == [grant_id]
    assert result(server, "grants.list")["grants"] == []
    assert ask(server, bash(project, "rm -f b.txt", "c2"))["action"] == "confirm"


def test_a_grant_chosen_on_another_screen_is_kept(server: Sidecar, project: Path) -> None:
    from guard._approvals import ask_local

    first = bash(project, "rm -f a.txt", "c1")
    reply = ask(server, first)
    approval = reply["approval"]
    (listed,) = ask_local(server.session.session_dir, {"op": "list"})["pending"]
    assert listed["grants"] == reply["dialog"]["choices"]["grants"]
    answer = {"op": "answer", "id": approval["id"], "digest": approval["digest"],
              "decision": "yes", "grant": 1}  # fmt: skip
    assert ask_local(server.session.session_dir, answer) == {"outcome": "accepted"}
    # The shim records without naming a grant: the question's answer says which.
    said = result(server, "record", {**first, "confirmed": True, "approvalId": approval["id"]})
    assert said["grant"] is not None and "*.txt" in said["grant"]["label"]
    assert ask(server, bash(project, "rm -f b.txt", "c2"))["action"] == "allow"
    (created,) = records(server.home, "grant.created")
    assert created["breadth"] == "same-directory"
