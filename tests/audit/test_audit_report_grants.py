"""Scoped grants in ``build_report``/``render_report`` and in ``filter_records(grant=)``.

A call a grant covered has its own evidence (``confirmation.recorded`` with ``coveredBy``)
but no dialog: it is auditable like any confirmed call, names its grant, and counts as
covered, never as the operator's yes. Each grant the log names gets one row: what it
covers, how many calls it covered and how many of them ran, how it ended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit._reporting.render import TABLE_WIDTH
from audit._reporting.show import grant_of, render_records
from audit.log import AuditLog
from audit.verify import build_report, filter_records, read_records, render_report
from audit.wire import AuditRecord
from tests.audit.audit_testkit import FixedSigner, consumed, executed, recorded

Events = list[tuple[str, dict[str, Any]]]

G1 = "grant_" + "1" * 22
G2 = "grant_" + "2" * 22
G3 = "grant_" + "3" * 22
SCOPE = "/home/me/project-with-a-rather-long-name-for-the-table/and/a/subdirectory"
KEY = "ed25519:" + "0" * 64


def ev(n: int) -> str:
    return f"oce_{n:022d}"


def session(name: str) -> dict[str, Any]:
    return {"id": name, "guardPid": 4242}


def created(grant_id: str, evidence_id: str, who: str = "s1", **extra: Any) -> dict[str, Any]:
    return {
        "grantId": grant_id,
        "pattern": {"tool": "bash", "kind": "destructive", "program": "rm", "fixedArgs": ["-f"],
                    "globs": [f"{SCOPE}/*.txt"], "scope": SCOPE, "ruleIds": ["builtin.rm"]},
        "breadth": "same-directory",
        "label": f"rm -f of files matching {SCOPE}/*.txt",
        "createdAtIso": "2026-11-22T01:00:00.000Z",
        "expiresAtIso": "2026-11-22T01:30:00.000Z",
        "maxUses": 20,
        "evidenceId": evidence_id,
        "policyDigest": "sha256:" + "a" * 64,
        "keyId": KEY,
        "recordHash": "sha256:" + "b" * 64,
        "session": session(who),
        **extra,
    }  # fmt: skip


def covered(
    evidence_id: str, call: str, payload: str, grant_id: str, use: int, who: str = "s1"
) -> dict[str, Any]:
    data = recorded(evidence_id, call, payload)
    return {**data, "origin": "runtime-grant", "coveredBy": {"grantId": grant_id, "use": use},
            "session": session(who)}  # fmt: skip


def used(grant_id: str, use: int, evidence_id: str, call: str) -> dict[str, Any]:
    return {"grantId": grant_id, "use": use, "evidenceId": evidence_id, "toolCallId": call,
            "session": session("s1")}  # fmt: skip


def ran(call: str, payload: str, who: str = "s1") -> dict[str, Any]:
    return {**executed(call, payload), "preview": payload, "session": session(who)}


def asked(evidence_id: str, call: str, payload: str, who: str = "s1") -> dict[str, Any]:
    return {**recorded(evidence_id, call, payload), "session": session(who)}


def write(tmp_path: Path, signer: FixedSigner, events: Events) -> list[AuditRecord]:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        for event, data in events:
            log.append(event, data)
    return list(read_records(path))


@pytest.fixture
def life(tmp_path: Path, signer: FixedSigner) -> list[AuditRecord]:
    """s1: a dialog's yes makes G1; G1 covers two calls (one never runs), then is revoked
    from the CLI. s2: a yes makes G2, which covers nothing and ends with its session. A
    covered call names G3, whose creation is not in this log."""
    return write(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", asked(ev(1), "c1", "rm -f a.txt")),  # seq 1
            ("grant.created", created(G1, ev(1))),  # seq 2
            ("tool.executed", ran("c1", "rm -f a.txt")),  # 3
            ("confirmation.recorded", covered(ev(2), "c2", "rm -f b.txt", G1, 1)),  # 4
            ("grant.used", used(G1, 1, ev(2), "c2")),  # 5
            ("evidence.consumed", consumed(ev(2), "rm -f b.txt")),  # 6
            ("tool.executed", ran("c2", "rm -f b.txt")),  # 7
            ("confirmation.recorded", covered(ev(3), "c3", "rm -f c.txt", G1, 2)),  # 8
            ("grant.used", used(G1, 2, ev(3), "c3")),  # 9
            ("grant.revoked", {"grantId": G1, "by": "cli", "uses": 2}),  # 10
            ("grant.expired", {"grantId": G1, "reason": "time", "uses": 2}),  # 11: too late
            ("confirmation.recorded", asked(ev(4), "d1", "rm -f d.log", "s2")),  # 12
            ("grant.created", created(G2, ev(4), "s2", breadth="same-call")),  # 13
            ("tool.executed", ran("d1", "rm -f d.log", "s2")),  # 14
            (
                "grant.expired",
                {"grantId": G2, "reason": "session-ended", "uses": 0, "session": session("s2")},
            ),  # 15
            ("confirmation.recorded", covered(ev(5), "e1", "rm -f e.txt", G3, 7)),  # 16
            ("tool.executed", ran("e1", "rm -f e.txt")),  # 17
        ],
    )


def test_covered_calls_are_auditable_name_their_grant_and_are_no_yes(
    life: list[AuditRecord],
) -> None:
    report = build_report(life)
    rows = {r.tool_call_id: (r.classification, r.evidence_id, r.grant_id) for r in report.rows}
    assert rows == {
        "c1": ("auditable", ev(1), None),
        "c2": ("auditable", ev(2), G1),
        "d1": ("auditable", ev(4), None),
        "e1": ("auditable", ev(5), G3),
    }
    assert report.decision == "no-gaps"
    s = report.summary
    assert (s.executions, s.confirmations, s.covered_by_grant) == (4, 2, 3)
    assert s.by_grant == {G1: 2, G2: 0, G3: 1}
    assert s.by_session["s1"]["confirmed"] == 1 and s.by_session["s2"]["confirmed"] == 1
    assert s.by_session["s1"]["executions"] == 3


def test_each_grant_says_what_it_covered_and_how_it_ended(life: list[AuditRecord]) -> None:
    g1, g2, g3 = build_report(life).grants
    assert g1.model_dump(mode="json") == {
        "grantId": G1,
        "session": "s1",
        "label": f"rm -f of files matching {SCOPE}/*.txt",
        "breadth": "same-directory",
        "scope": SCOPE,
        "globs": [f"{SCOPE}/*.txt"],
        "createdSeq": 2,
        "createdAtIso": "2026-11-22T01:00:00.000Z",
        "expiresAtIso": "2026-11-22T01:30:00.000Z",
        "maxUses": 20,
        "evidenceId": ev(1),
        "covered": 2,
        "ran": 1,  # c3 was covered, then never ran
        "uses": 2,
        "ended": "revoked",  # the first end counts; the later expiry does not change it
        "endedBy": "cli",
        "endedSeq": 10,
    }
    assert (g2.grant_id, g2.session, g2.breadth, g2.covered, g2.ran) == (
        G2,
        "s2",
        "same-call",
        0,
        0,
    )
    assert (g2.ended, g2.ended_by, g2.ended_seq) == ("session-ended", None, 15)
    # Its creation is not in this log (a log started after it, say): only what the log knows.
    assert (g3.grant_id, g3.label, g3.created_seq, g3.max_uses, g3.evidence_id) == (
        G3, None, None, None, None
    )  # fmt: skip
    assert (g3.session, g3.covered, g3.ran, g3.uses, g3.ended) == ("s1", 1, 1, 0, None)


def test_the_json_carries_the_grants(life: list[AuditRecord]) -> None:
    wire = json.loads(build_report(life).model_dump_json())
    assert wire["summary"]["coveredByGrant"] == 3
    assert wire["summary"]["byGrant"] == {G1: 2, G2: 0, G3: 1}
    assert [g["grantId"] for g in wire["grants"]] == [G1, G2, G3]
    assert [r["grantId"] for r in wire["rows"]] == [None, G1, None, G3]


def test_the_text_counts_grants_apart_within_120_characters(life: list[AuditRecord]) -> None:
    text = render_report(build_report(life))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert "  confirmed by the operator: 2" in lines
    assert "  covered by a scoped grant (no dialog, each its own evidence): 3 (grants: 3)" in lines
    assert any(
        line.startswith("    s1: 3 risky ran (0 gaps), 1 yes,") and line.endswith(", 3 by a grant")
        for line in lines
    ), text
    assert any(line.startswith("    s2: ") and "by a grant" not in line for line in lines)
    (c2,) = [line for line in lines if line.startswith("7 ")]
    assert "ok by grant, consumed" in c2
    (c1,) = [line for line in lines if line.startswith("3 ")]
    assert "ok, not consumed" in c1 and "grant" not in c1
    table = text.split("scoped grants (calls each covered without a dialog):\n")[1].splitlines()
    assert table[0].split() == ["SEQ", "GRANT", "COVERED", "ENDED", "COVERS"]
    assert table[1].split()[:5] == ["2", G1, "2/20", "revoked", "(pi-guard)"]
    assert table[1].endswith("…")  # the label is cut to fit
    assert table[2].split()[:5] == ["13", G2, "0/20", "expired", "(session-ended)"]
    assert table[3].split() == ["-", G3, "1", "not", "ended", "-"]


def test_wide_shows_every_column_of_the_grants(life: list[AuditRecord]) -> None:
    text = render_report(build_report(life), wide=True)
    calls, grants = text.split("scoped grants (calls each covered without a dialog):\n")
    header = calls.splitlines()[calls.splitlines().index("") + 1]
    assert header.split()[-1] == "GRANT"
    assert any(line.startswith("7 ") and line.endswith(G1) for line in calls.splitlines())
    table = grants.splitlines()
    assert table[0].split() == ["SEQ", "TIME", "GRANT", "SESSION", "BREADTH", "COVERED", "RAN",
                                "USES", "MAX", "EXPIRES", "ENDED", "EVIDENCE", "COVERS"]  # fmt: skip
    assert table[1].endswith(f"rm -f of files matching {SCOPE}/*.txt")  # whole
    assert "revoked (pi-guard) at seq 10" in table[1] and ev(1) in table[1]
    assert "expired (session-ended) at seq 15" in table[2]


def test_a_grant_revoked_in_pi_says_so(tmp_path: Path, signer: FixedSigner) -> None:
    records = write(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", asked(ev(1), "c1", "rm -f a.txt")),
            ("grant.created", created(G1, ev(1))),
            ("grant.revoked", {"grantId": G1, "by": "guard-command", "uses": 0}),
        ],
    )
    report = build_report(records)
    (grant,) = report.grants
    assert (grant.ended, grant.ended_by) == ("revoked", "guard-command")
    assert "revoked (/guard)" in render_report(report)


def test_a_log_without_grants_reports_as_before(tmp_path: Path, signer: FixedSigner) -> None:
    records = write(
        tmp_path,
        signer,
        [
            ("confirmation.recorded", asked(ev(1), "c1", "rm -f a.txt")),
            ("tool.executed", ran("c1", "rm -f a.txt")),
        ],
    )
    report = build_report(records)
    assert (report.grants, report.summary.covered_by_grant, report.summary.by_grant) == ((), 0, {})
    assert report.summary.confirmations == 1
    for wide in (False, True):
        text = render_report(report, wide=wide)
        assert "grant" not in text.lower()


def test_show_follows_one_grants_life(life: list[AuditRecord]) -> None:
    def seqs(grant: str) -> list[int]:
        return [r.seq for r in filter_records(life, grant=grant)]

    # Created, each covered call's confirmation and use, its ends; not the dialog that made it.
    assert seqs(G1) == [2, 4, 5, 8, 9, 10, 11]
    assert seqs(G2) == [13, 15]
    assert seqs(G3) == [16]
    assert seqs("grant_" + "9" * 22) == []
    assert [r.seq for r in filter_records(life, grant=G1, event="confirmation.recorded")] == [4, 8]
    assert grant_of(life[1]) is None  # the dialog's own yes names no grant
    text = render_records(filter_records(life, grant=G1))
    lines = text.splitlines()
    assert f"coveredBy={G1}#1" in lines[2] and "origin=runtime-grant" in lines[2]
    assert f"pattern={SCOPE}/*.txt" in lines[1] and "{" not in lines[1]
