"""Grants and the effects review, appended typed, write what their mappings wrote: the same
facts, the same bytes (grant.created, grant.used, grant.revoked, grant.expired from the grant
desk; effects.reviewed held, applied and empty; effects.resolved applied and discarded)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import canonical_json, sha256_prefixed, utc_now
from guard import Guard
from guard._effects import Effect, Hold, Review

RM = {"command": "rm -f a.txt"}
LAYER = "layer_0123456789"
DIGEST = "sha256:" + "cd" * 32


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "work"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(name)
    return root


def opened(tmp_path: Path, name: str, *, preview: bool = True, uses: int = 3) -> Guard:
    home = tmp_path / name
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text(f"[grants]\nmax_uses = {uses}\n")
    guard = Guard.open(home, preview=preview)
    guard.attribute("session-1", "/s/1.jsonl")
    return guard


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Guard]:
    with opened(tmp_path, "home") as guard:
        yield guard


def session() -> dict[str, Any]:
    return {"id": "session-1", "file": "/s/1.jsonl", "guardPid": os.getpid()}


def records(g: Guard, event: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records(g.audit.path) if r.event == event]


def same(found: dict[str, Any], before: dict[str, Any]) -> None:
    assert canonical_json(found) == canonical_json(before)


def grant(g: Guard, workspace: Path) -> tuple[str, dict[str, Any]]:
    """The operator answers ``rm -f a.txt`` with the ``./*.txt`` grant: its id and the
    ``grant.created`` mapping of those facts."""
    offered = g.grants.offers("bash", RM, workspace, workspace=workspace)[1]
    said = g.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
    assert said.evidence_id is not None
    record = g.grants.create(offered, said.evidence_id, workspace=workspace)
    line = record.model_dump(mode="json", by_alias=True)
    return record.grant_id, {
        "grantId": record.grant_id,
        "pattern": offered.pattern.model_dump(mode="json"),
        "breadth": "same-directory",
        "label": offered.label,
        "createdAtIso": record.created_at_iso,
        "expiresAtIso": record.expires_at_iso,
        "maxUses": 3,
        "evidenceId": said.evidence_id,
        "policyDigest": g.grants.policy_digest(workspace),
        "keyId": g.key_id,
        "recordHash": sha256_prefixed(canonical_json(line)),
        "session": session(),
    }


def test_created_and_used_with_a_call_id_and_a_preview(g: Guard, workspace: Path) -> None:
    grant_id, before = grant(g, workspace)
    (created,) = records(g, "grant.created")
    same(created, before)
    covered = g.grants.covered("bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace,
                        tool_call_id="call-1")  # fmt: skip
    assert covered is not None
    (used,) = records(g, "grant.used")
    same(used, {"grantId": grant_id, "use": 1, "evidenceId": covered.evidence_id,
                "toolCallId": "call-1", "preview": "rm -f b.txt", "session": session()})  # fmt: skip
    recorded = records(g, "confirmation.recorded")[-1]
    assert recorded["coveredBy"] == {"grantId": grant_id, "use": 1}
    assert recorded["origin"] == "runtime-grant"


def test_used_without_a_call_id_or_a_preview(tmp_path: Path, workspace: Path) -> None:
    with opened(tmp_path, "quiet", preview=False) as g:
        grant_id, _ = grant(g, workspace)
        covered = g.grants.covered(
            "bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace
        )
        assert covered is not None
        (used,) = records(g, "grant.used")
    same(used, {"grantId": grant_id, "use": 1, "evidenceId": covered.evidence_id,
                "session": session()})  # fmt: skip


def test_revoked_by_the_guard_command_and_by_the_cli(g: Guard, workspace: Path) -> None:
    first, _ = grant(g, workspace)
    assert g.grants.covered("bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace)
    second, _ = grant(g, workspace)
    g.grants.end("revoked", utc_now(), grant_id=first, by="guard-command")
    g.grants.end("revoked", utc_now(), grant_id=second)
    by_command, by_cli = records(g, "grant.revoked")
    same(by_command, {"grantId": first, "uses": 1, "by": "guard-command", "session": session()})
    same(by_cli, {"grantId": second, "uses": 0, "by": "cli", "session": session()})


def test_expired_by_its_uses_and_with_its_session(tmp_path: Path, workspace: Path) -> None:
    with opened(tmp_path, "short", uses=1) as g:
        spent, _ = grant(g, workspace)
        assert g.grants.covered("bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace)
        assert not g.grants.covered(
            "bash", {"command": "rm -f c.txt"}, workspace, workspace=workspace
        )
        left, _ = grant(g, workspace)
        g.sessions.ended("shutdown")
        uses, ended = records(g, "grant.expired")
    same(uses, {"grantId": spent, "uses": 1, "reason": "uses", "session": session()})
    same(ended, {"grantId": left, "uses": 0, "reason": "session-ended", "session": session()})


# -- effects.reviewed, effects.resolved ---------------------------------------------------------


def effect(kind: Any, path: str) -> Effect:
    return Effect(kind=kind, path=path, kind_of="none" if kind == "deleted" else "file",
                  was="file" if kind != "created" else "none")  # fmt: skip


def test_reviewed_held_applied_and_empty(g: Guard, tmp_path: Path) -> None:
    scope = str(tmp_path)
    gone = effect("deleted", "notes.txt")
    held = Review(
        decision="partial",
        effects=(effect("created", "out/a.o"), effect("created", "out/b.o"), gone),
        held=(Hold(effect=gone, reason="untracked", files=1, bytes=12),),
        digest=DIGEST,
    )
    g.effects.reviewed(held, LAYER, scope, tool_call_id="call-2")
    applied = Review(decision="applied", effects=(effect("modified", "a.txt"),), digest=DIGEST)
    g.effects.reviewed(applied, LAYER, scope)
    g.effects.reviewed(Review(decision="empty"), LAYER, scope)
    first, second, third = records(g, "effects.reviewed")
    same(first, {
        "layer": LAYER,
        "scope": scope,
        "decision": "held",
        "counts": {"created": 2, "deleted": 1},
        "held": [{"path": "notes.txt", "kind": "deleted", "reason": "untracked",
                  "files": 1, "bytes": 12}],
        "heldTotal": 1,
        "digest": DIGEST,
        "toolCallId": "call-2",
        "session": session(),
    })  # fmt: skip
    same(second, {"layer": LAYER, "scope": scope, "decision": "applied",
                  "counts": {"modified": 1}, "held": [], "heldTotal": 0, "digest": DIGEST,
                  "session": session()})  # fmt: skip
    same(third, {"layer": LAYER, "scope": scope, "decision": "empty", "counts": {},
                 "held": [], "heldTotal": 0, "session": session()})  # fmt: skip


def test_more_than_64_held_list_64_and_count_them_all(g: Guard, tmp_path: Path) -> None:
    gone = [effect("deleted", f"f{i}.txt") for i in range(70)]
    review = Review(decision="held", effects=tuple(gone), digest=DIGEST,
                    held=tuple(Hold(effect=e, reason="uncommitted") for e in gone))  # fmt: skip
    g.effects.reviewed(review, LAYER, str(tmp_path))
    (found,) = records(g, "effects.reviewed")
    assert len(found["held"]) == 64 and found["heldTotal"] == 70
    assert found["held"][0] == {"path": "f0.txt", "kind": "deleted", "reason": "uncommitted",
                                "files": 1, "bytes": 0}  # fmt: skip


def test_resolved_applied_and_discarded(g: Guard, tmp_path: Path) -> None:
    scope = str(tmp_path)
    held = Review(decision="held", digest=DIGEST)
    yes = g.effects.record(held, LAYER, scope, "rm notes.txt", confirmed=True,
                           tool_call_id="call-3", approver="pi-dialog")  # fmt: skip
    g.effects.record(held, LAYER, scope, "rm notes.txt", confirmed=True)
    g.effects.record(held, LAYER, scope, "rm notes.txt", confirmed=False,
                     tool_call_id="call-4", reason="timeout", approver="web")  # fmt: skip
    g.effects.record(held, LAYER, scope, "rm notes.txt", confirmed=False)
    applied, bare, timeout, declined = records(g, "effects.resolved")
    base = {"layer": LAYER, "digest": DIGEST, "session": session()}
    same(applied, {**base, "toolCallId": "call-3", "approver": "pi-dialog",
                   "decision": "applied", "evidenceId": yes.evidence_id})  # fmt: skip
    assert bare["evidenceId"] != yes.evidence_id
    same(bare, {**base, "decision": "applied", "evidenceId": bare["evidenceId"]})
    same(timeout, {**base, "toolCallId": "call-4", "approver": "web",
                   "decision": "discarded", "reason": "timeout"})  # fmt: skip
    same(declined, {**base, "decision": "discarded", "reason": "declined"})
