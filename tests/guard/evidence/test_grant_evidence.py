"""Evidence a scoped grant covered (``origin: runtime-grant`` with ``coveredBy``), and the
consumer's ``require_dialog``.

See docs/monitor.md, "The envelope (v1)" and "The consumer's checks
and reason codes".
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from audit.verify import read_records
from audit.wire import Origin, utc_now
from guard import ConsumeResult, Fingerprint, Guard
from guard._evidence.envelope import mint_envelope, parse_envelope
from guard._evidence.models import CoveredBy
from guard._evidence.single_use import consume_synced
from guard.evidence import KeyStore, SqliteLedger, check_and_consume
from tests.guard.conftest import Keys
from tests.guard.evidence.test_consume import CALL, T0, fp, resign

GRANT = CoveredBy(
    grant_id="grant_AAECAwQFBgcICQoLDA0ODw", use=3, grant_evidence_id="oce_" + "B" * 22
)


def mint(
    keys: Keys,
    project: Path,
    *,
    origin: Origin = "runtime-grant",
    covered_by: CoveredBy | None = GRANT,
    at: datetime = T0,
) -> dict[str, Any]:
    env = mint_envelope(
        keys.signer,
        fp(project),
        origin=origin,
        ttl_seconds=30,
        now=at,
        tool_call_id="call_1",
        covered_by=covered_by,
    )
    return env.model_dump(mode="json")


def check(
    keys: Keys,
    ledger: SqliteLedger,
    raw: Any,
    pending: Fingerprint | None,
    *,
    require_dialog: bool = False,
    now: datetime = T0,
) -> ConsumeResult:
    return check_and_consume(
        raw,
        pending,
        keyring=keys.keyring(),
        ledger=ledger,
        now=now,
        tool_call_id="call_1",
        require_dialog=require_dialog,
    )


def outcome(result: ConsumeResult) -> tuple[str, str, tuple[str, ...]]:
    return result.decision, result.match.decision, result.reasons


# -- the envelope --------------------------------------------------------------------------------


def test_covered_by_is_signed_into_the_details_in_camel_case(keys: Keys, project: Path) -> None:
    env = mint(keys, project)
    details = env["details"]
    assert details["origin"] == "runtime-grant"
    assert details["coveredBy"] == {
        "grantId": "grant_AAECAwQFBgcICQoLDA0ODw",
        "use": 3,
        "grantEvidenceId": "oce_" + "B" * 22,
    }
    parsed, raw = parse_envelope(json.dumps(env))
    assert parsed.details.covered_by == GRANT
    assert raw["coveredBy"] == details["coveredBy"]


def test_evidence_without_a_grant_has_no_covered_by_at_all(keys: Keys, project: Path) -> None:
    details = mint(keys, project, origin="runtime-ui-confirm", covered_by=None)["details"]
    assert "coveredBy" not in details
    assert (
        parse_envelope(json.dumps({"content": "x", "details": details}))[0].details.covered_by
        is None
    )


@pytest.mark.parametrize(
    ("origin", "covered_by"),
    [("runtime-grant", None), ("runtime-ui-confirm", GRANT), ("operator-contract-review", GRANT)],
)
def test_origin_and_covered_by_must_agree_when_minting(
    keys: Keys, project: Path, origin: Origin, covered_by: CoveredBy | None
) -> None:
    with pytest.raises(ValidationError):
        mint(keys, project, origin=origin, covered_by=covered_by)


@pytest.mark.parametrize(
    ("change", "value"),
    [
        ("origin", "runtime-ui-confirm"),  # coveredBy without the grant origin
        ("coveredBy", None),  # the grant origin without coveredBy (removed)
        ("coveredBy", {"grantId": "grant_short", "use": 3, "grantEvidenceId": "oce_" + "B" * 22}),
        ("coveredBy", {"grantId": GRANT.grant_id, "use": 0, "grantEvidenceId": "oce_" + "B" * 22}),
        (
            "coveredBy",
            {"grantId": GRANT.grant_id, "use": 1001, "grantEvidenceId": "oce_" + "B" * 22},
        ),
        (
            "coveredBy",
            {"grantId": GRANT.grant_id, "use": True, "grantEvidenceId": "oce_" + "B" * 22},
        ),
        (
            "coveredBy",
            {"grantId": GRANT.grant_id, "use": 1.0, "grantEvidenceId": "oce_" + "B" * 22},
        ),
        ("coveredBy", {"grantId": GRANT.grant_id, "use": 3, "grantEvidenceId": "evidence"}),
        ("coveredBy", {"grantId": GRANT.grant_id, "use": 3}),
        ("coveredBy", {**GRANT.model_dump(mode="json"), "scope": "/"}),
        ("coveredBy", {**GRANT.model_dump(mode="json")} | {"grant_id": GRANT.grant_id}),
        ("coveredBy", "grant_AAECAwQFBgcICQoLDA0ODw"),
    ],
)
def test_a_bad_covered_by_is_malformed_even_when_signed(
    keys: Keys, ledger: SqliteLedger, project: Path, change: str, value: Any
) -> None:
    env = mint(keys, project)
    details = {**env["details"], change: value}
    if value is None:
        del details[change]
    result = check(keys, ledger, resign(keys, {**env, "details": details}), fp(project))
    assert outcome(result) == ("rejected", "malformed", ("schema-violation",))


def test_covered_by_edited_after_signing_is_untrusted(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    env["details"]["coveredBy"] = {**env["details"]["coveredBy"], "use": 4}
    assert outcome(check(keys, ledger, env, fp(project))) == (
        "rejected",
        "untrusted",
        ("signature-invalid",),
    )


# -- consuming it --------------------------------------------------------------------------------


def test_grant_covered_evidence_is_consumed_once_by_default(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    first = check(keys, ledger, env, fp(project))
    assert outcome(first) == ("consumed", "match", ())
    assert first.model_dump(mode="json")["dispatchAllowed"] is False
    assert outcome(check(keys, ledger, env, fp(project))) == ("rejected", "consumed", ("replay",))


def test_require_dialog_refuses_grant_covered_evidence_and_consumes_nothing(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    refused = check(keys, ledger, env, fp(project), require_dialog=True)
    assert outcome(refused) == ("rejected", "not-dialog", ("grant-covered",))
    assert refused.evidence_id == env["details"]["evidenceId"]
    assert refused.summary.startswith("rejected (not-dialog): ")
    dumped = refused.model_dump(mode="json")
    assert (dumped["dispatchAllowed"], dumped["authorization"]) == (False, "none")
    # Asked again, still the same answer (not a replay) ...
    again = check(keys, ledger, env, fp(project), require_dialog=True)
    assert outcome(again) == ("rejected", "not-dialog", ("grant-covered",))
    # ... and a consumer that accepts grants still consumes it, once.
    assert outcome(check(keys, ledger, env, fp(project))) == ("consumed", "match", ())
    assert outcome(check(keys, ledger, env, fp(project))) == ("rejected", "consumed", ("replay",))


@pytest.mark.parametrize("origin", ["runtime-ui-confirm", "operator-contract-review"])
def test_require_dialog_consumes_dialog_evidence(
    keys: Keys, ledger: SqliteLedger, project: Path, origin: Origin
) -> None:
    env = mint(keys, project, origin=origin, covered_by=None)
    consumed = check(keys, ledger, env, fp(project), require_dialog=True)
    assert outcome(consumed) == ("consumed", "match", ())
    replay = check(keys, ledger, env, fp(project), require_dialog=True)
    assert outcome(replay) == ("rejected", "consumed", ("replay",))


def test_the_dialog_check_comes_after_the_checks_of_the_envelope_and_the_call(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    other = fp(project, {"command": "rm -rf src"})
    assert outcome(check(keys, ledger, env, other, require_dialog=True)) == (
        "rejected",
        "mismatch",
        ("payload-hash-mismatch",),
    )
    late = T0 + timedelta(seconds=30)
    assert outcome(check(keys, ledger, env, fp(project), require_dialog=True, now=late)) == (
        "rejected",
        "expired",
        ("expired",),
    )
    narrowed = check_and_consume(
        env,
        fp(project),
        keyring=keys.keyring(),
        ledger=ledger,
        now=T0,
        trusted_origins={"runtime-ui-confirm"},
        tool_call_id="call_1",
        require_dialog=True,
    )
    assert outcome(narrowed) == ("rejected", "untrusted", ("origin-untrusted",))


def test_require_dialog_answers_before_the_ledger_is_asked(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    # Even once consumed, a consumer that wants a dialog is told why it would not take the
    # evidence (not a replay): the ledger is never asked.
    env = mint(keys, project)
    assert outcome(check(keys, ledger, env, fp(project))) == ("consumed", "match", ())
    assert outcome(check(keys, ledger, env, fp(project), require_dialog=True)) == (
        "rejected",
        "not-dialog",
        ("grant-covered",),
    )


def test_consume_synced_passes_require_dialog_through(
    keys: Keys, ledger: SqliteLedger, project: Path, tmp_path: Path
) -> None:
    env = mint(keys, project)
    args: dict[str, Any] = {
        "keyring": keys.keyring(),
        "ledger": ledger,
        "log_path": tmp_path / "no-audit.jsonl",
        "now": T0,
        "require_log": False,
        "tool_call_id": "call_1",
    }
    refused = consume_synced(env, fp(project), require_dialog=True, **args)
    assert outcome(refused) == ("rejected", "not-dialog", ("grant-covered",))
    assert outcome(consume_synced(env, fp(project), **args)) == ("consumed", "match", ())


# -- through the guard: the audit record ----------------------------------------------------------


def test_guard_consume_require_dialog_audits_the_rejection(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "guard-home"
    with Guard.open(home) as guard:
        pending = guard.evaluate("bash", CALL, project).fingerprint
        assert pending is not None
        signer, _ = KeyStore.open(guard.home).ensure_key()
        env = mint_envelope(
            signer,
            pending,
            origin="runtime-grant",
            ttl_seconds=60,
            now=utc_now(),
            tool_call_id="call_1",
            covered_by=GRANT,
        ).model_dump(mode="json")
        refused = guard.consume(
            env, "bash", CALL, project, call_checked_elsewhere=True, require_dialog=True
        )
        assert outcome(refused) == ("rejected", "not-dialog", ("grant-covered",))
        dialog_only = guard.consume(
            env, "bash", CALL, project, tool_call_id="call_1", require_dialog=True
        )
        assert outcome(dialog_only) == ("rejected", "not-dialog", ("grant-covered",))
        consumed = guard.consume(env, "bash", CALL, project, tool_call_id="call_1")
        assert outcome(consumed) == ("consumed", "match", ())
    rejected = [
        r.data for r in read_records(home / "audit.jsonl") if r.event == "evidence.rejected"
    ]
    assert [(r["decision"], r["reasons"], r["evidenceId"]) for r in rejected] == [
        ("not-dialog", ["grant-covered"], env["details"]["evidenceId"])
    ] * 2
    assert rejected[1]["toolCallId"] == "call_1"
    eid = env["details"]["evidenceId"]
    assert [
        r.data["evidenceId"]
        for r in read_records(home / "audit.jsonl")
        if r.event == "evidence.consumed"
    ] == [eid]
