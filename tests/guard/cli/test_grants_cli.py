"""``pi-guard grants list|revoke`` over grants a real sidecar made.

Each test drives pi sessions' sidecars in this process the way pi does (plan the session,
evaluate a risky call, answer its dialog with a grant), then runs ``pi-guard`` on the same
home (in process, :func:`tests.cli_runner.invoke`): what it lists, what revoking does to the
grants file, the audit log and the next call, every refusal as one line and its exit code,
and a grants file edited by hand refused rather than listed. Also ``audit report`` and
``audit show --grant`` over the same home.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import format_iso, utc_now
from guard._evidence.keys import KeyStore
from guard._grants.store import GrantStore, new_grant_id
from guard._sidecar.handlers.methods import Sidecar
from tests.cli_runner import Result, invoke
from tests.guard.sidecar.test_sidecar_methods import result

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("bwrap_required")]


def run(home: Path, *args: str) -> Result:
    env = {k: v for k, v in os.environ.items() if k != "PI_OPERATOR_GUARD_DEBUG"}
    return invoke(*args, home=home, env=env)


def one_line_error(proc: Result) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@dataclass
class Session:
    """One pi session's sidecar on the shared home, its workspace the project."""

    server: Sidecar
    project: Path
    open: bool = True

    def close(self) -> None:
        """pi's session ends (its grants end with it)."""
        if self.open:
            self.open = False
            self.server.close()

    def call(self, command: str, call_id: str) -> dict[str, Any]:
        return {"toolName": "bash", "input": {"command": command}, "cwd": str(self.project),
                "toolCallId": call_id}  # fmt: skip

    def evaluate(self, command: str, call_id: str) -> dict[str, Any]:
        reply: dict[str, Any] = result(self.server, "evaluate", self.call(command, call_id))
        return reply

    def grant(self, command: str, call_id: str, which: int) -> str:
        """Ask about ``command`` and answer with the dialog's grant ``which`` (0: the same
        call, 1: the same action on a glob); the call runs. Returns the grant's id."""
        asked = self.evaluate(command, call_id)
        assert asked["action"] == "confirm" and len(asked["dialog"]["choices"]["grants"]) == 2
        answer = {**self.call(command, call_id), "confirmed": True, "grant": which}
        grant_id: str = result(self.server, "record", answer)["grant"]["grantId"]
        self.ran(command, call_id)
        return grant_id

    def ran(self, command: str, call_id: str) -> None:
        result(self.server, "audit.toolExecuted", {**self.call(command, call_id), "isError": False})


@dataclass
class World:
    home: Path
    a: Session
    b: Session


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    project.mkdir()
    # Untracked work: a call that would delete it asks (a missing target would run unasked).
    for name in ("a.txt", "b.txt", "c.txt", "c2.txt", "c3.txt", "a.log", "b.log"):
        (project / name).write_text(f"{name}\n")
    sessions = []
    for session_id in ("sess-a", "sess-b"):
        server = Sidecar(home)
        plan = {"cwd": str(project), "sessionId": session_id, "mode": "tui"}
        result(server, "sandbox.plan", plan)
        sessions.append(Session(server, project))
    yield World(home, *sessions)
    for session in sessions:
        session.close()


def listed(home: Path) -> list[dict[str, Any]]:
    proc = run(home, "grants", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    grants: list[dict[str, Any]] = json.loads(proc.stdout)
    return grants


def test_list_shows_every_sessions_active_grants_with_time_and_uses_left(world: World) -> None:
    txt = world.a.grant("rm -f a.txt", "a1", 1)
    same = world.b.grant("rm -f b.log", "b1", 0)
    for n in (2, 3):  # two calls the glob grant covers, without a dialog
        covered = world.a.evaluate(f"rm -f c{n}.txt", f"a{n}")
        assert covered["action"] == "allow" and covered["covered"]["grantId"] == txt

    grants = listed(world.home)
    assert [(g["grantId"], g["sessionId"]) for g in grants] == [(txt, "sess-a"), (same, "sess-b")]
    first, second = grants
    assert first["label"] == f"rm -f of files matching {world.a.project}/*.txt"
    assert first["globs"] == [f"{world.a.project}/*.txt"]
    assert (first["program"], first["fixedArgs"], first["breadth"]) == (
        "rm",
        ["-f"],
        "same-directory",
    )
    assert (first["uses"], first["maxUses"], first["usesLeft"]) == (2, 20, 18)
    assert (second["uses"], second["usesLeft"], second["breadth"]) == (0, 20, "same-call")
    assert 29 * 60 < first["secondsLeft"] <= 30 * 60
    records = list(read_records(world.home / "audit.jsonl"))
    made = [r for r in records if r.event == "grant.created"]
    assert [r.data["evidenceId"] for r in made] == [first["evidenceId"], second["evidenceId"]]

    text = run(world.home, "grants", "list")
    assert text.returncode == 0 and text.stderr == ""
    header, *rows = text.stdout.splitlines()
    assert header.split() == ["GRANT", "SESSION", "TIME", "LEFT", "USES", "LEFT", "COVERS"]
    assert len(rows) == 2
    assert rows[0].split()[:2] == [txt, "sess-a"] and rows[0].endswith(first["label"])
    assert " min " in rows[0] and rows[0].split()[4] == "18"
    assert rows[1].split()[:2] == [same, "sess-b"] and rows[1].split()[4] == "20"


def test_an_empty_home_lists_nothing(world: World) -> None:
    assert listed(world.home) == []
    text = run(world.home, "grants", "list")
    assert (text.returncode, text.stdout, text.stderr) == (0, "(no active grants)\n", "")


def test_revoke_one_grant_ends_it_signed_and_audited_and_the_next_call_asks(
    world: World,
) -> None:
    txt = world.a.grant("rm -f a.txt", "a1", 1)
    other = world.a.grant("rm -f a.log", "a2", 0)
    assert world.a.evaluate("rm -f b.txt", "a3")["action"] == "allow"

    proc = run(world.home, "grants", "revoke", txt)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"revoked {txt} (session sess-a, 1 of 20 uses)\n"
    assert [g["grantId"] for g in listed(world.home)] == [other]

    last = json.loads((world.home / "grants.jsonl").read_text().splitlines()[-1])
    assert (last["type"], last["grantId"], last["reason"]) == ("revoked", txt, "revoked")
    (revoked,) = [r for r in read_records(world.home / "audit.jsonl") if r.event == "grant.revoked"]
    assert revoked.data == {"grantId": txt, "by": "cli", "uses": 1}

    # The sidecar reads the file afresh: the grant covers nothing any more.
    asked = world.a.evaluate("rm -f c.txt", "a4")
    assert asked["action"] == "confirm" and asked["covered"] is None
    assert world.a.evaluate("rm -f a.log", "a5")["action"] == "allow"  # the other still does


def test_revoke_all_ends_every_active_grant_of_every_session(world: World) -> None:
    first = world.a.grant("rm -f a.txt", "a1", 1)
    second = world.b.grant("rm -f b.txt", "b1", 0)

    proc = run(world.home, "grants", "revoke", "--all")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"revoked {first} (session sess-a, 0 of 20 uses)",
        f"revoked {second} (session sess-b, 0 of 20 uses)",
    ]
    assert listed(world.home) == []
    events = [r for r in read_records(world.home / "audit.jsonl") if r.event == "grant.revoked"]
    assert [(r.data["grantId"], r.data["by"]) for r in events] == [(first, "cli"), (second, "cli")]

    again = run(world.home, "grants", "revoke", "--all")
    assert (again.returncode, again.stdout) == (0, "")
    assert one_line_error(again) == "pi-guard: no active grants to revoke"
    assert world.b.evaluate("rm -f b.txt", "b2")["action"] == "confirm"


def test_revoke_refuses_an_unknown_an_ended_or_a_malformed_id_in_one_line(world: World) -> None:
    grant_id = world.a.grant("rm -f a.txt", "a1", 0)
    assert run(world.home, "grants", "revoke", grant_id).returncode == 0
    size = (world.home / "grants.jsonl").stat().st_size
    unknown = new_grant_id()
    for args, said in (
        ((grant_id,), f"grant: this grant has already ended (revoked) (got {grant_id})"),
        ((unknown,), f"grant: no such grant in this home (got {unknown})"),
        (("grant_short",), "ID: is not a grant id"),
        (("oce_" + "A" * 22,), "ID: is not a grant id"),
    ):
        proc = run(world.home, "grants", "revoke", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == ""
        assert one_line_error(proc).startswith("pi-guard: error: " + said), proc.stderr
    for args in ((), (grant_id, "--all")):  # usage: exactly one of ID and --all
        proc = run(world.home, "grants", "revoke", *args)
        assert proc.returncode == 2 and proc.stdout == ""
        assert one_line_error(proc).startswith("pi-guard grants revoke: error: ")
    assert (world.home / "grants.jsonl").stat().st_size == size  # nothing written
    assert [r.event for r in read_records(world.home / "audit.jsonl")].count("grant.revoked") == 1


def test_a_grant_whose_time_ran_out_is_not_listed_nor_revoked(world: World) -> None:
    live = world.a.grant("rm -f a.txt", "a1", 0)
    # A grant signed by the home's own key whose time ran out; nothing has marked it yet.
    store = GrantStore(world.home / "grants.jsonl")
    line = json.loads((world.home / "grants.jsonl").read_text().splitlines()[0])
    for key in ("schema", "type", "keyId", "signature"):
        del line[key]
    past = utc_now() - timedelta(minutes=5)
    stale = new_grant_id()
    line.update(grantId=stale, createdAtIso=format_iso(past - timedelta(minutes=30)),
                expiresAtIso=format_iso(past))  # fmt: skip
    store.create(line, KeyStore.open(world.home).load_signer())

    assert [g["grantId"] for g in listed(world.home)] == [live]
    proc = run(world.home, "grants", "revoke", stale)
    assert proc.returncode == 2
    assert "this grant has already ended (time)" in one_line_error(proc)
    everything = run(world.home, "grants", "revoke", "--all")
    assert everything.stdout.splitlines() == [f"revoked {live} (session sess-a, 0 of 20 uses)"]


@pytest.mark.parametrize(
    ("what", "edit"),
    [
        ("a wider glob", lambda line: line.replace("/*.txt", "/*")),
        ("more uses", lambda line: line.replace('"maxUses":20', '"maxUses":1000')),
        ("a line replayed", None),
    ],
)
def test_a_grants_file_edited_by_hand_is_refused_not_listed(
    world: World, what: str, edit: Any
) -> None:
    world.a.grant("rm -f a.txt", "a1", 1)
    assert world.a.evaluate("rm -f b.txt", "a2")["action"] == "allow"
    path = world.home / "grants.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    if edit is None:
        lines.append(lines[1])  # its "used" line once more
    else:
        assert edit(lines[0]) != lines[0], what
        lines[0] = edit(lines[0])
    path.write_text("".join(lines))

    for args in (("list",), ("list", "--json"), ("revoke", "--all")):
        proc = run(world.home, "grants", *args)
        assert proc.returncode == 6, (what, args, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        line = one_line_error(proc)
        assert line.startswith("pi-guard: error: grants file: does not verify (grants.jsonl line")
        assert str(path) in line
    # The guard agrees: the forged grant covers nothing, the call is asked.
    assert world.a.evaluate("rm -f c.txt", "a3")["action"] == "confirm"
    assert path.read_text() == "".join(lines)  # nothing appended to a file that does not verify


def test_no_guard_home_is_bad_input_and_creates_none(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    for args in (("list",), ("revoke", "--all")):
        proc = run(home, "grants", *args)
        assert proc.returncode == 2
        assert one_line_error(proc) == f"pi-guard: error: --home: no guard home here (got {home})"
    assert not home.exists()


def test_report_and_show_tell_each_grants_life(world: World) -> None:
    """The calls a grant covered are counted for it, not as the operator's yes; ``show
    --grant`` lists its records and the confirmations of the calls it covered."""
    txt = world.a.grant("rm -f a.txt", "a1", 1)
    for n in (2, 3):
        assert world.a.evaluate(f"rm -f c{n}.txt", f"a{n}")["action"] == "allow"
        world.a.ran(f"rm -f c{n}.txt", f"a{n}")
    assert run(world.home, "grants", "revoke", txt).returncode == 0
    other = world.b.grant("rm -f b.log", "b1", 0)
    world.b.close()  # its session ends: so does its grant

    proc = run(world.home, "audit", "report", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    summary = report["summary"]
    assert (summary["executions"], summary["auditGaps"]) == (4, 0)
    assert (summary["confirmations"], summary["coveredByGrant"]) == (2, 2)
    assert summary["byGrant"] == {txt: 2, other: 0}
    assert summary["bySession"]["sess-a"]["confirmed"] == 1
    assert [(r["toolCallId"], r["grantId"]) for r in report["rows"]] == [
        ("a1", None), ("a2", txt), ("a3", txt), ("b1", None)
    ]  # fmt: skip
    first, second = report["grants"]
    assert (first["grantId"], first["covered"], first["ran"], first["uses"]) == (txt, 2, 2, 2)
    assert (first["ended"], first["endedBy"], first["session"]) == ("revoked", "cli", "sess-a")
    assert first["label"] == f"rm -f of files matching {world.a.project}/*.txt"
    assert (second["grantId"], second["covered"], second["ended"]) == (other, 0, "session-ended")

    text = run(world.home, "audit", "report")
    assert text.returncode == 0
    assert max(len(line) for line in text.stdout.splitlines()) <= 120
    assert (
        "covered by a scoped grant (no dialog, each its own evidence): 2 (grants: 2)" in text.stdout
    )
    tail = text.stdout.split("scoped grants (calls each covered without a dialog):\n")[1]
    rows = tail.splitlines()
    assert rows[0].split() == ["SEQ", "GRANT", "COVERED", "ENDED", "COVERS"]
    assert rows[1].split()[1:5] == [txt, "2/20", "revoked", "(pi-guard)"]
    assert rows[2].split()[1:5] == [other, "0/20", "expired", "(session-ended)"]

    shown = run(world.home, "audit", "show", "--grant", txt, "--json")
    assert shown.returncode == 0, shown.stderr
    life = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [(r["event"], r["data"].get("toolCallId")) for r in life] == [
        ("grant.created", None),
        ("confirmation.recorded", "a2"),
        ("grant.used", "a2"),
        ("confirmation.recorded", "a3"),
        ("grant.used", "a3"),
        ("grant.revoked", None),
    ]
    assert [r["data"]["coveredBy"] for r in life if r["event"] == "confirmation.recorded"] == [
        {"grantId": txt, "use": 1}, {"grantId": txt, "use": 2}
    ]  # fmt: skip
    unknown = run(world.home, "audit", "show", "--grant", new_grant_id())
    assert unknown.returncode == 2
    assert f"it has: {', '.join(sorted((txt, other)))}" in one_line_error(unknown)
