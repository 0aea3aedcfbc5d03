"""``audit report``'s effects review: each command that changed the workspace, what was held,
applied or discarded, and by whom (the operator on a screen, a timeout, nobody to ask, a
restart; or nothing held: a user rule, the call's yes, or nothing lost); and the calls the
operator stopped with "No, and stop the agent", counted apart and never a gap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit.log import AuditLog
from audit.verify import AuditReport, build_report, read_records, render_report
from tests.audit.audit_testkit import FixedSigner, declined, executed, recorded

Events = list[tuple[str, dict[str, Any]]]
DIGEST = "sha256:" + "d" * 64
E1 = "oce_" + "1" * 22
E2 = "oce_" + "2" * 22


def _report(tmp_path: Path, signer: FixedSigner, events: Events) -> AuditReport:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        for event, data in events:
            log.append(event, data)
    return build_report(read_records(path))


def reviewed(layer: str, call: str | None, *held: tuple[str, str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "layer": layer,
        "scope": "/work/project",
        "decision": "held" if held else "applied",
        "digest": DIGEST,
        "counts": {"deleted": len(held) or 1},
        "held": [
            {"path": path, "kind": kind, "reason": why, "files": 1, "bytes": 5}
            for kind, path, why in held
        ],
        "heldTotal": len(held),
    }
    if call is not None:
        data["toolCallId"] = call
    return data


def resolved(layer: str, decision: str, **more: Any) -> dict[str, Any]:
    return {"layer": layer, "decision": decision, "digest": DIGEST, **more}


def preview(data: dict[str, Any], text: str) -> dict[str, Any]:
    return {**data, "preview": text}


def test_every_review_and_who_settled_it(tmp_path: Path, signer: FixedSigner) -> None:
    untracked = ("deleted", "notes.md", "untracked")
    events: Events = [
        # held, the operator discards it on pi's dialog
        ("effects.reviewed", reviewed("layer-000001", "c1", untracked)),
        ("effects.resolved", resolved("layer-000001", "discarded", reason="declined",
                                      approver="pi-dialog", toolCallId="c1")),
        ("tool.executed", preview(executed("c1", kind="local-safe"), "python3 gone.py")),
        # held, applied from the page: evidence minted for it
        ("effects.reviewed", reviewed("layer-000002", "c2", ("modified", "src/a.c", "uncommitted"))),
        ("effects.resolved", resolved("layer-000002", "applied", evidenceId=E1, approver="web")),
        ("tool.executed", preview(executed("c2", kind="local-safe"), "sed -i s/a/b/ src/a.c")),
        # held, nobody answered in time; held with nobody to ask; held by a dead sidecar
        ("effects.reviewed", reviewed("layer-000003", "c3", untracked)),
        ("effects.resolved", resolved("layer-000003", "discarded", reason="timeout")),
        ("effects.reviewed", reviewed("layer-000004", "c4", untracked)),
        ("effects.resolved", resolved("layer-000004", "discarded", reason="no-ui")),
        ("effects.reviewed", reviewed("layer-000005", None, untracked)),
        ("effects.resolved", resolved("layer-000005", "discarded", reason="sidecar-restart")),
        # held, no answer in the log yet
        ("effects.reviewed", reviewed("layer-000006", "c6", ("created", ".env", "protected"))),
        # nothing held: a user rule allowed the call, the operator said yes to it, nothing lost
        ("effects.reviewed", reviewed("layer-000007", "c7")),
        ("tool.executed", {**executed("c7", kind="local-safe"), "ruleIds": ["user.build"]}),
        ("confirmation.recorded", preview(recorded(E2, "c8"), "rm -rf build")),
        ("effects.reviewed", reviewed("layer-000008", "c8")),
        ("tool.executed", executed("c8", evidence_id=E2)),
        ("effects.reviewed", reviewed("layer-000009", "c9")),
        # a command that changed nothing is no row
        ("effects.reviewed", {"layer": "layer-000010", "scope": "/w", "decision": "empty"}),
    ]  # fmt: skip
    report = _report(tmp_path, signer, events)
    got = [(e.layer[-2:], e.outcome, e.by, e.approver, e.command) for e in report.effects]
    assert got == [
        ("01", "discarded", "operator", "pi-dialog", "python3 gone.py"),
        ("02", "applied", "operator", "web", "sed -i s/a/b/ src/a.c"),
        ("03", "discarded", "timeout", None, None),
        ("04", "discarded", "no-ui", None, None),
        ("05", "discarded", "sidecar-restart", None, None),
        ("06", "held", None, None, None),
        ("07", "applied", "user-rule", None, None),
        ("08", "applied", "call-approved", None, "rm -rf build"),
        ("09", "applied", "nothing-lost", None, None),
    ]
    assert report.effects[0].held_paths == ("deleted notes.md (untracked)",)
    assert report.effects[1].evidence_id == E1
    s = report.summary
    assert (s.effects_reviewed, s.effects_held) == (9, 6)
    assert s.effects_by_outcome == {
        "applied by call-approved": 1,
        "applied by nothing-lost": 1,
        "applied by operator": 1,
        "applied by user-rule": 1,
        "discarded by no-ui": 1,
        "discarded by operator": 1,
        "discarded by sidecar-restart": 1,
        "discarded by timeout": 1,
        "held": 1,
    }
    assert report.decision == "no-gaps"  # the review adds no gap
    text = render_report(report)
    assert "effects review: 9 commands changed the workspace, 6 held work for the operator" in text
    assert "effects review (commands that held work):" in text
    (line,) = [x for x in text.splitlines() if "python3 gone.py" in x and "discarded" in x]
    assert "operator (pi-dialog)" in line and "deleted notes.md (untracked)" in line
    assert any("held" in x and "nobody yet" in x and ".env" in x for x in text.splitlines())
    assert "nothing-lost" not in text.split("effects review (")[1]  # compact: held ones only
    wide = render_report(report, wide=True)
    assert "every command that changed the workspace" in wide and "nothing-lost" in wide
    dumped = json.loads(report.model_dump_json(by_alias=True))
    assert dumped["effects"][1]["by"] == "operator" and dumped["effects"][1]["approver"] == "web"
    assert dumped["summary"]["effectsHeld"] == 6


def test_stopped_calls_are_counted_apart_and_never_a_gap(
    tmp_path: Path, signer: FixedSigner
) -> None:
    session = {"id": "s-1", "guardPid": 42}
    stopped = [
        ("confirmation.declined", {**declined(f"c{n}", reason="stopped"), "session": session})
        for n in range(3)
    ]
    report = _report(
        tmp_path,
        signer,
        [*stopped, ("confirmation.declined", {**declined("c9"), "session": session})],
    )
    s = report.summary
    assert (s.stopped, s.declined, s.blocked, s.audit_gaps) == (3, 1, 0, 0)
    assert [r.outcome for r in report.stopped] == ["stopped"] * 3 + ["declined"]
    assert s.by_session["s-1"]["stopped"] == 3 and s.by_session["s-1"]["declined"] == 1
    text = render_report(report)
    assert "stopped by the operator (No, and stop the agent; did not run): 3" in text
    assert "stopped: stopped" in text
