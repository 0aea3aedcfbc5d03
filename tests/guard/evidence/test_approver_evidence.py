"""Evidence that says which screen answered: the signed ``approver`` of the details.

``pi-dialog`` (pi's own dialog), ``cli`` (``pi-guard approvals`` in a second terminal) or
``web`` (the local page); absent when the minter names none, never ``null``. See
docs/monitor.md, "The envelope (v1)".
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from audit.wire import Approver
from guard import ConsumeResult, Fingerprint
from guard._approvals.model import APPROVERS
from guard._evidence.envelope import mint_envelope, parse_envelope, signing_message
from guard._evidence.models import CoveredBy, EvidenceDetails
from guard.evidence import SqliteLedger, check_and_consume
from tests.guard.conftest import Keys
from tests.guard.evidence.test_consume import T0, fp, resign

WHO: tuple[Approver, ...] = get_args(Approver)
GRANT = CoveredBy(
    grant_id="grant_AAECAwQFBgcICQoLDA0ODw", use=1, grant_evidence_id="oce_" + "B" * 22
)


def mint(
    keys: Keys,
    project: Path,
    approver: Approver | None,
    *,
    covered_by: CoveredBy | None = None,
    at: datetime = T0,
) -> dict[str, Any]:
    env = mint_envelope(
        keys.signer,
        fp(project),
        origin="runtime-grant" if covered_by is not None else "runtime-ui-confirm",
        ttl_seconds=30,
        now=at,
        tool_call_id="call_1",
        covered_by=covered_by,
        approver=approver,
    )
    return env.model_dump(mode="json")


def check(keys: Keys, ledger: SqliteLedger, raw: Any, pending: Fingerprint) -> ConsumeResult:
    return check_and_consume(
        raw, pending, keyring=keys.keyring(), ledger=ledger, now=T0, tool_call_id="call_1"
    )


def outcome(result: ConsumeResult) -> tuple[str, str, tuple[str, ...]]:
    return result.decision, result.match.decision, result.reasons


def test_the_approvers_are_those_of_the_approval_port() -> None:
    assert WHO == ("pi-dialog", "cli", "web")
    assert APPROVERS == WHO


# -- minting -------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", WHO)
def test_the_approver_is_signed_into_the_details(keys: Keys, project: Path, who: Approver) -> None:
    details = mint(keys, project, who)["details"]
    assert details["approver"] == who
    assert b'"approver":"' + who.encode() + b'"' in signing_message(details)
    parsed, raw = parse_envelope(json.dumps({"content": "x", "details": details}))
    assert parsed.details.approver == who
    assert raw["approver"] == who


def test_without_an_approver_the_details_are_what_they_always_were(
    keys: Keys, project: Path
) -> None:
    details = mint(keys, project, None)["details"]
    assert set(details) == {
        "schema",
        "evidenceId",
        "origin",
        "trusted",
        "actionKind",
        "toolName",
        "scope",
        "payloadHash",
        "toolCallId",
        "createdAtIso",
        "expiresAtIso",
        "dispatchAllowed",
        "canOverrideMonitorBlock",
        "authorization",
        "keyId",
        "signature",
    }
    assert b'"approver"' not in signing_message(details)
    parsed, _ = parse_envelope(json.dumps({"content": "x", "details": details}))
    assert parsed.details.approver is None
    assert "approver" not in parsed.model_dump(mode="json")["details"]


def test_a_grant_s_evidence_may_name_the_approver_too(keys: Keys, project: Path) -> None:
    details = mint(keys, project, "web", covered_by=GRANT)["details"]
    assert (details["origin"], details["approver"]) == ("runtime-grant", "web")


@pytest.mark.parametrize("bad", ["terminal", "CLI", "", 1, True, ["cli"]])
def test_only_the_three_approvers_can_be_minted(keys: Keys, project: Path, bad: Any) -> None:
    with pytest.raises(ValidationError):
        mint(keys, project, bad)


def test_an_explicit_null_approver_is_refused_not_read_as_absent(keys: Keys, project: Path) -> None:
    details = mint(keys, project, None)["details"]
    with pytest.raises(ValidationError, match="never null"):
        EvidenceDetails.model_validate({**details, "approver": None}, by_alias=True)


# -- consuming it --------------------------------------------------------------------------------


@pytest.mark.parametrize("who", WHO)
def test_evidence_naming_each_approver_is_consumed_once(
    keys: Keys, ledger: SqliteLedger, project: Path, who: Approver
) -> None:
    env = mint(keys, project, who)
    first = check(keys, ledger, json.dumps(env), fp(project))
    assert outcome(first) == ("consumed", "match", ())
    dumped = first.model_dump(mode="json")
    assert (dumped["dispatchAllowed"], dumped["authorization"]) == (False, "none")
    assert outcome(check(keys, ledger, env, fp(project))) == ("rejected", "consumed", ("replay",))


@pytest.mark.parametrize(("signed_as", "changed_to"), [(a, b) for a in WHO for b in WHO if a != b])
def test_an_approver_changed_after_signing_fails_the_signature(
    keys: Keys, ledger: SqliteLedger, project: Path, signed_as: Approver, changed_to: Approver
) -> None:
    env = mint(keys, project, signed_as)
    env["details"]["approver"] = changed_to
    assert outcome(check(keys, ledger, env, fp(project))) == (
        "rejected",
        "untrusted",
        ("signature-invalid",),
    )


def test_an_approver_added_or_removed_after_signing_fails_the_signature(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    added = mint(keys, project, None)
    added["details"]["approver"] = "pi-dialog"
    removed = mint(keys, project, "cli")
    del removed["details"]["approver"]
    for env in (added, removed):
        assert outcome(check(keys, ledger, env, fp(project))) == (
            "rejected",
            "untrusted",
            ("signature-invalid",),
        )


@pytest.mark.parametrize(
    "bad", ["terminal", "CLI", "", "pi_dialog", 1, 0, True, None, ["cli"], {"name": "cli"}]
)
def test_any_other_approver_is_malformed_even_when_signed(
    keys: Keys, ledger: SqliteLedger, project: Path, bad: Any
) -> None:
    env = mint(keys, project, "cli")
    env = resign(keys, {**env, "details": {**env["details"], "approver": bad}})
    assert outcome(check(keys, ledger, env, fp(project))) == (
        "rejected",
        "malformed",
        ("schema-violation",),
    )
