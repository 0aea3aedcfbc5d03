"""A grant's life through the guard: kept signed, covering only while everything still holds,
ended once and audited; a grants file edited or forged in any way makes the guard ask."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from audit.verify import read_records
from audit.wire import parse_iso, utc_now
from guard import Guard
from guard._evidence.keys import KeyStore
from guard._grants.store import GrantStore
from tests.processes import racers

pytestmark = pytest.mark.integration

RM = {"command": "rm -f a.txt"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "work"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.log"):
        (root / name).write_text(name)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path.resolve() / "guard-home"


@pytest.fixture
def guard(home: Path) -> Iterator[Guard]:
    with Guard.open(home) as opened:
        opened.attribute("session-1", "/s/1.jsonl")
        yield opened


def grant(guard: Guard, workspace: Path, breadth: int = 1) -> str:
    """The operator answers ``rm -f a.txt`` with grant ``breadth`` (1: ``./*.txt``)."""
    offered = guard.grants.offers("bash", RM, workspace, workspace=workspace)
    said = guard.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
    assert said.evidence_id is not None
    return guard.grants.create(offered[breadth], said.evidence_id, workspace=workspace).grant_id


def covered(guard: Guard, workspace: Path, command: str) -> bool:
    result = guard.grants.covered("bash", {"command": command}, workspace, workspace=workspace)
    return result is not None


def events(home: Path, name: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records(home / "audit.jsonl") if r.event == name]


def test_a_grant_covers_similar_calls_each_with_its_own_evidence(
    guard: Guard, home: Path, workspace: Path
) -> None:
    grant_id = grant(guard, workspace)
    first = guard.grants.covered("bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace)
    second = guard.grants.covered(
        "bash", {"command": "rm -f c.txt"}, workspace, workspace=workspace
    )
    assert first is not None and second is not None
    assert first.envelope is not None and second.envelope is not None
    assert first.evidence_id != second.evidence_id
    uses = [first.envelope.details.covered_by, second.envelope.details.covered_by]
    assert [(u.grant_id, u.use) for u in uses if u is not None] == [(grant_id, 1), (grant_id, 2)]
    assert not covered(guard, workspace, "rm -f d.log")  # outside the glob
    recorded = events(home, "confirmation.recorded")
    assert [r["origin"] for r in recorded] == ["runtime-ui-confirm", *["runtime-grant"] * 2]
    assert [u["use"] for u in events(home, "grant.used")] == [1, 2]
    assert guard.session_counts["covered"] == 2


def edit_first_line(path: Path, change: Any) -> None:
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    change(record)
    lines[0] = json.dumps(record, separators=(",", ":"), sort_keys=True)
    path.write_text("\n".join(lines) + "\n")


WIDEN = {
    "a glob widened": lambda r: r["pattern"].update(globs=[r["pattern"]["scope"] + "/*"]),
    "more uses": lambda r: r.update(maxUses=1000),
    "another session": lambda r: r.update(sessionId="session-2"),
    "a later expiry": lambda r: r.update(expiresAtIso="2999-01-01T00:00:00.000Z"),
    "another program": lambda r: r["pattern"].update(program="shred"),
}


@pytest.mark.parametrize("what", sorted(WIDEN))
def test_an_edited_grant_record_makes_the_guard_ask(
    guard: Guard, home: Path, workspace: Path, what: str
) -> None:
    grant(guard, workspace)
    edit_first_line(home / "grants.jsonl", WIDEN[what])
    assert not covered(guard, workspace, "rm -f b.txt")
    assert guard.grants.desk.problem is not None and "line 1" in guard.grants.desk.problem
    assert events(home, "grant.used") == []


def test_a_forged_grant_signed_by_another_key_makes_the_guard_ask(
    guard: Guard, home: Path, workspace: Path, tmp_path: Path
) -> None:
    grant(guard, workspace)
    other, _ = KeyStore.open(tmp_path / "other-home").ensure_key()
    path = home / "grants.jsonl"
    # A whole grant written by someone holding another key: its line is refused, and then
    # the file as a whole (no grant in it covers anything until it is removed).
    forged = GrantStore(path)
    record = json.loads(path.read_text().splitlines()[0])
    for key in ("grantId", "keyId", "signature", "schema", "type"):
        record.pop(key)
    forged.create({**record, "grantId": "grant_" + "A" * 22, "sessionId": "session-1"}, other)
    assert not covered(guard, workspace, "rm -f b.txt")
    assert "does not verify" in str(guard.grants.desk.problem)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text + "{not json\n",
        lambda text: text + "[]\n",
        lambda text: text + text.splitlines()[0] + "\n",  # the same grant created twice
        lambda text: text[: len(text) // 2],  # torn
    ],
)
def test_a_damaged_grants_file_makes_the_guard_ask(
    guard: Guard, home: Path, workspace: Path, damage: Any
) -> None:
    grant(guard, workspace)
    path = home / "grants.jsonl"
    path.write_text(damage(path.read_text()))
    assert not covered(guard, workspace, "rm -f b.txt")


def test_a_replayed_use_line_makes_the_guard_ask(guard: Guard, home: Path, workspace: Path) -> None:
    grant(guard, workspace)
    assert covered(guard, workspace, "rm -f b.txt")
    path = home / "grants.jsonl"
    lines = path.read_text().splitlines()
    # Replaying a signed line cannot reset the count or extend the grant: out of order.
    path.write_text("\n".join([*lines, lines[1]]) + "\n")
    assert not covered(guard, workspace, "rm -f c.txt")


def test_the_grant_ends_with_its_time_once(guard: Guard, home: Path, workspace: Path) -> None:
    grant(guard, workspace)
    later = utc_now() + timedelta(minutes=31)
    with freeze_time(later):
        assert not covered(guard, workspace, "rm -f b.txt")
        assert not covered(guard, workspace, "rm -f c.txt")
    assert [(e["reason"], e["uses"]) for e in events(home, "grant.expired")] == [("time", 0)]


def test_the_grant_ends_with_its_uses(home: Path, workspace: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text("[grants]\nmax_uses = 2\n")
    with Guard.open(home) as guard:
        guard.attribute("session-1")
        grant(guard, workspace)
        assert covered(guard, workspace, "rm -f b.txt")
        assert [s.uses for s in guard.grants.listed(utc_now())] == [1]
        assert covered(guard, workspace, "rm -f c.txt")
        assert guard.grants.listed(utc_now()) == []  # used up: not active any more
        assert not covered(guard, workspace, "rm -f b.txt")
    assert [(e["reason"], e["uses"]) for e in events(home, "grant.expired")] == [("uses", 2)]


def test_a_key_rotation_ends_every_grant(guard: Guard, home: Path, workspace: Path) -> None:
    grant(guard, workspace)
    guard.rotate_key()
    assert not covered(guard, workspace, "rm -f b.txt")
    assert [e["reason"] for e in events(home, "grant.expired")] == ["key-rotated"]


def test_a_changed_policy_ends_the_grant(guard: Guard, home: Path, workspace: Path) -> None:
    grant(guard, workspace)
    (home / "operator-guard.toml").write_text("[grants]\nmax_uses = 5\n")
    assert not covered(guard, workspace, "rm -f b.txt")
    assert [e["reason"] for e in events(home, "grant.expired")] == ["policy-changed"]


def test_grants_switched_off_are_never_offered(home: Path, workspace: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text("[grants]\nenabled = false\n")
    with Guard.open(home) as guard:
        guard.attribute("session-1")
        assert guard.grants.offers("bash", RM, workspace, workspace=workspace) == ()


def test_a_grant_is_its_sessions_only_and_ends_with_it(
    guard: Guard, home: Path, workspace: Path
) -> None:
    grant(guard, workspace)
    guard.attribute("session-2")
    assert not covered(guard, workspace, "rm -f b.txt")
    guard.attribute(None)
    assert guard.grants.offers("bash", RM, workspace, workspace=workspace) == ()
    assert not covered(guard, workspace, "rm -f b.txt")
    guard.attribute("session-1")
    guard.sessions.ended("shutdown")
    assert [e["reason"] for e in events(home, "grant.expired")] == ["session-ended"]
    assert not covered(guard, workspace, "rm -f b.txt")


def test_revoked_from_another_process_the_next_call_asks(
    guard: Guard, home: Path, workspace: Path
) -> None:
    grant_id = grant(guard, workspace)
    with Guard.open(home) as terminal:
        (ended,) = terminal.grants.end("revoked", utc_now(), grant_id=grant_id, by="cli")
    assert ended.record.grant_id == grant_id
    revoke = json.loads((home / "grants.jsonl").read_text().splitlines()[-1])
    assert (revoke["type"], revoke["reason"], revoke["by"]) == ("revoked", "revoked", "cli")
    assert not covered(guard, workspace, "rm -f b.txt")
    assert [e["by"] for e in events(home, "grant.revoked")] == ["cli"]


def test_a_guard_home_opened_elsewhere_voids_no_grant(
    home: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other guard homes are noted (and hidden from the sandbox) as they open, from other
    sessions, installs or a test suite: machine state, not the operator's policy, so a grant
    still covers once the list has changed (here: read by a second guard on the same home)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with Guard.open(home) as guard:
        guard.attribute("session-1")
        grant(guard, workspace)
    for name in ("other-home", "third-home"):
        Guard.open(tmp_path / name).close()
    with Guard.open(home) as terminal:
        terminal.attribute("session-1")
        assert covered(terminal, workspace, "rm -f b.txt")
        with Guard.open(tmp_path / "fourth-home"):
            assert covered(terminal, workspace, "rm -f c.txt")


def _use(home: str, workspace: str, name: str, out: Any) -> None:
    with Guard.open(home) as guard:
        guard.attribute("session-1")
        found = guard.grants.covered(
            "bash", {"command": f"rm -f {name}"}, workspace, workspace=workspace
        )
        out.put(found is not None)


def test_many_processes_share_the_uses_and_none_is_counted_twice(
    home: Path, workspace: Path
) -> None:
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text("[grants]\nmax_uses = 5\n")
    with Guard.open(home) as guard:
        guard.attribute("session-1")
        grant(guard, workspace)
    context = racers()
    out = context.Queue()
    names = [f"f{i}.txt" for i in range(12)]
    runs = [context.Process(target=_use, args=(str(home), str(workspace), n, out)) for n in names]
    for run in runs:
        run.start()
    for run in runs:
        run.join(60)
    answers = [out.get(timeout=5) for _ in runs]
    assert answers.count(True) == 5
    uses = sorted(e["use"] for e in events(home, "grant.used"))
    assert uses == [1, 2, 3, 4, 5]


def test_a_grant_covers_until_the_millisecond_before_its_expiry_and_not_at_it(
    guard: Guard, home: Path, workspace: Path
) -> None:
    grant(guard, workspace)
    (state,) = guard.grants.listed(utc_now())
    expires = parse_iso(state.record.expires_at_iso, "expiresAtIso")
    with freeze_time(expires - timedelta(milliseconds=1)):
        assert covered(guard, workspace, "rm -f b.txt")
    with freeze_time(expires):
        assert not covered(guard, workspace, "rm -f c.txt")
    assert [e["reason"] for e in events(home, "grant.expired")] == ["time"]
