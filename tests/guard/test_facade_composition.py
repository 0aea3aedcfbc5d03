"""`Guard` is composed, not inherited: its collaborators (calls, outcomes, grants, operators,
effects, sessions, spool, consumption, planners) are plain objects built in one place on one shared core, so what
one of them changes (the key, the pi session, the observer) every other one sees at once.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import AuditRecord, utc_now
from guard import BadInputError, Guard
from guard._effects import Effect, Hold, Review
from guard._facade import (
    Calls,
    Consumption,
    Core,
    Effects,
    Grants,
    Operators,
    Outcomes,
    Planners,
    Sessions,
    Spool,
)
from guard._operator import enrolled_credential
from tests.softauthn import SoftAuthenticator

RM = {"command": "rm -f a.txt"}
LAYER = "layer_0123456789"
COLLABORATORS = {
    "calls": Calls,
    "outcomes": Outcomes,
    "grants": Grants,
    "operators": Operators,
    "effects": Effects,
    "sessions": Sessions,
    "spool": Spool,
    "consumption": Consumption,
    "planners": Planners,
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "work"
    root.mkdir()
    for name in ("a.txt", "b.txt"):
        (root / name).write_text(name)
    return root


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Guard]:
    with Guard.open(tmp_path / "home") as opened:
        yield opened


def held_review() -> Review:
    gone = Effect(kind="deleted", path="notes.txt", kind_of="none", was="file")
    return Review(decision="held", effects=(gone,), held=(Hold(effect=gone, reason="untracked"),),
                  digest="sha256:" + "ab" * 32)  # fmt: skip


def events(g: Guard) -> list[AuditRecord]:
    return list(read_records(g.audit.path))


def test_no_class_of_the_facade_inherits_another() -> None:
    for cls in (Guard, Core, *COLLABORATORS.values()):
        assert cls.__mro__ == (cls, object), cls


def test_each_module_of_the_facade_reads_in_one_sitting() -> None:
    """`Guard` keeps thin verbs; what is more than delegation lives in its collaborator."""
    folder = Path(__file__).resolve().parents[2] / "guard" / "_facade"
    long = {p.name: n for p in folder.glob("*.py") if (n := len(p.read_text().splitlines())) > 320}
    assert long == {}


def test_the_collaborators_are_built_once_and_share_the_guards_core(g: Guard) -> None:
    for name, cls in COLLABORATORS.items():
        part = getattr(g, name)
        assert type(part) is cls
        assert part._core is g.core, name  # one core, never a copy of its state
    assert (g.home, g.audit, g.ledger, g.classifier) == (
        g.core.home,
        g.core.audit,
        g.core.ledger,
        g.core.classifier,
    )


def test_a_key_rotated_by_another_process_signs_every_collaborators_evidence(
    tmp_path: Path, workspace: Path
) -> None:
    with Guard.open(tmp_path / "home") as g, Guard.open(tmp_path / "home") as other:
        g.attribute("session-1")
        old, new = other.rotate_key()  # as `pi-guard keys rotate` would, from outside
        assert g.key_id == new != old
        said = g.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
        assert said.envelope is not None and said.envelope.details.key_id == new
        effects = g.effects.record(held_review(), LAYER, str(workspace), "rm notes.txt",
                                   confirmed=True)  # fmt: skip
        assert effects.envelope is not None and effects.envelope.details.key_id == new
        offered = g.grants.offers("bash", RM, workspace, workspace=workspace)
        assert said.evidence_id is not None and offered
        record = g.grants.create(offered[1], said.evidence_id, workspace=workspace)
        assert record.key_id == new
        covered = g.grants.covered("bash", {"command": "rm -f b.txt"}, workspace,
                                   workspace=workspace)  # fmt: skip
        assert covered is not None and covered.envelope is not None
        assert covered.envelope.details.key_id == new


def test_the_pi_session_and_its_counts_are_one_for_every_collaborator(
    g: Guard, workspace: Path
) -> None:
    # Without a pi session no collaborator offers or covers a grant.
    assert g.grants.offers("bash", RM, workspace, workspace=workspace) == ()
    with pytest.raises(BadInputError, match="a grant needs a pi session"):
        g.grants.create(object(), "ev_x", workspace=workspace)  # type: ignore[arg-type]
    g.attribute("session-1", "/s/1.jsonl")
    ref = {"id": "session-1", "file": "/s/1.jsonl", "guardPid": os.getpid()}
    assert g.session == g.core.session == ref
    said = g.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
    g.decline("bash", RM, workspace, "declined", tool_call_id="c2")
    g.blocked("read", {"path": "a.txt"}, workspace, "sandbox-unavailable", tool_call_id="c3")
    g.tool_executed("c1", "bash", RM, workspace, False, said.evidence_id)
    g.sessions.approval_refused("stale", "web", None)
    assert g.session_counts is g.core.session_counts
    counts = {"asked": 2, "confirmed": 1, "declined": 1, "blocked": 1, "executed": 1}
    assert g.session_counts == {**counts, "covered": 0}
    g.sessions.ended("shutdown")
    (ended,) = [r.data for r in events(g) if r.event == "session.ended"]
    assert {k: ended[k] for k in counts} == counts
    named = [r.event for r in events(g) if r.data.get("session") == ref]
    assert named == [
        "confirmation.recorded",
        "confirmation.declined",
        "confirmation.declined",
        "tool.executed",
        "approval.refused",
        "session.ended",
    ]
    g.attribute("session-2")  # another session starts counting afresh
    assert g.session_counts == dict.fromkeys(g.session_counts, 0)


def test_the_guards_observer_sees_what_every_collaborator_appends(
    g: Guard, workspace: Path
) -> None:
    seen: list[str] = []
    g.observer = lambda record: seen.append(record.event)
    assert g.core.observer is g.observer
    g.attribute("session-1")
    g.sessions.started(str(workspace), "unsandboxed")
    key = SoftAuthenticator()
    challenge = secrets.token_bytes(32)
    g.operators.enroll(enrolled_credential(key.register(challenge), challenge=challenge,
                                           rp_id=key.rp_id, origin=key.origin, label="key",
                                           now=utc_now()))  # fmt: skip
    assert [c.label for c in g.operators.listed()] == ["key"]
    reservation = g.operators.reserve("bash", RM, workspace, tool_call_id="c1")
    assert reservation is not None and reservation.key_id == g.key_id
    said = g.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
    assert said.evidence_id is not None
    offered = g.grants.offers("bash", RM, workspace, workspace=workspace)
    g.grants.create(offered[1], said.evidence_id, workspace=workspace)
    g.effects.reviewed(held_review(), LAYER, str(workspace))
    reply = g.spool.replay([late_executed()])
    assert reply.delivered == ["spool_" + "b" * 20]
    g.sessions.network_refused("example.com", 443, "not-allowed", str(workspace))
    g.observer = None
    g.sessions.ended("shutdown")
    assert seen == [
        "session.started",
        "operator.enrolled",
        "confirmation.recorded",
        "grant.created",
        "effects.reviewed",
        "tool.executed",
        "network.refused",
    ]
    assert [r.event for r in events(g)][-1] == "session.ended"  # appended, not observed


def late_executed() -> dict[str, Any]:
    return {
        "kind": "executed",
        "id": "spool_" + "b" * 20,
        "at": "2026-11-29T01:00:00.000Z",
        "toolName": "read",
        "input": {"path": "a.txt"},
        "cwd": "/",
        "toolCallId": "late-1",
        "isError": False,
    }


def test_the_guards_consume_is_its_consumptions_one_path(g: Guard, workspace: Path) -> None:
    said = g.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
    assert said.envelope is not None
    envelope = said.envelope.model_dump(mode="json")
    first = g.consumption.consume(envelope, "bash", RM, workspace, call_checked_elsewhere=True)
    again = g.consume(envelope, "bash", RM, workspace, call_checked_elsewhere=True)
    assert (first.decision, again.decision) == ("consumed", "rejected")  # once, either way
    assert [r.event for r in events(g)][-2:] == ["evidence.consumed", "evidence.rejected"]
    assert g.status() == g.core.status() and g.status()["consumedIds"] == 1
    assert g.verify_audit().decision == "intact"
