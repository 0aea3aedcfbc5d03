"""A second, independent test for each time check and for the ledger's prune watermark.

test_consume.py meets each of these checks once, at its boundary under freezegun. Here the same
checks are met with other parameters (explicit ``now``, a custom skew and maximum TTL, several
lifetimes) so that none of them hangs on a single test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audit.wire import b64url_encode, format_iso
from guard import ConsumeResult, Fingerprint
from guard._evidence.envelope import mint_envelope, signing_message
from guard.evidence import KeyStore, SqliteLedger, check_and_consume, compute_fingerprint
from tests.guard.conftest import Keys

T0 = datetime(2027, 3, 4, 5, 6, 7, 890_000, tzinfo=UTC)
MS = timedelta(milliseconds=1)


def pending(project: Path) -> Fingerprint:
    return compute_fingerprint("protected", "write", {"path": ".env", "content": "A"}, project)


def mint(keys: Keys, project: Path, ttl: int, at: datetime = T0) -> dict[str, Any]:
    env = mint_envelope(
        keys.signer, pending(project), origin="runtime-ui-confirm", ttl_seconds=ttl, now=at
    )
    return env.model_dump(mode="json", exclude_none=True)


def consume(
    keys: Keys, ledger: SqliteLedger, env: dict[str, Any], project: Path, now: datetime, **kw: Any
) -> ConsumeResult:
    return check_and_consume(
        env, pending(project), keyring=keys.keyring(), ledger=ledger, now=now, **kw
    )


def resigned(keys: Keys, env: dict[str, Any], **changes: str) -> dict[str, Any]:
    details = {k: v for k, v in env["details"].items() if k != "signature"}
    details.update(changes)
    details["signature"] = b64url_encode(keys.signer.sign(signing_message(details)))
    return {**env, "details": details}


# -- expiry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ttl", [1, 7, 600])
def test_expiry_for_several_lifetimes(
    keys: Keys, ledger: SqliteLedger, project: Path, ttl: int
) -> None:
    expires = T0 + timedelta(seconds=ttl)
    late = consume(keys, ledger, mint(keys, project, ttl), project, expires)
    assert (late.decision, late.match.decision, late.reasons) == (
        "rejected",
        "expired",
        ("expired",),
    )
    much_later = consume(
        keys, ledger, mint(keys, project, ttl), project, expires + timedelta(days=3)
    )
    assert much_later.reasons == ("expired",)
    in_time = consume(keys, ledger, mint(keys, project, ttl), project, expires - MS)
    assert in_time.decision == "consumed"


def test_an_expired_envelope_is_not_consumed_and_never_reaches_the_ledger(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project, 5)
    assert consume(keys, ledger, env, project, T0 + timedelta(seconds=5)).reasons == ("expired",)
    assert ledger.count() == 0


# -- created in the future --------------------------------------------------------------------


@pytest.mark.parametrize("skew_s", [0, 1, 30])
def test_created_in_future_respects_the_given_skew(
    keys: Keys, ledger: SqliteLedger, project: Path, skew_s: int
) -> None:
    skew = timedelta(seconds=skew_s)
    early = consume(keys, ledger, mint(keys, project, 60), project, T0 - skew - MS, skew=skew)
    assert (early.match.decision, early.reasons) == ("not-yet-valid", ("created-in-future",))
    assert ledger.count() == 0
    on_edge = consume(keys, ledger, mint(keys, project, 60), project, T0 - skew, skew=skew)
    assert on_edge.decision == "consumed"


def test_an_envelope_from_next_year_is_not_yet_valid(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project, 30, at=T0 + timedelta(days=365))
    assert consume(keys, ledger, env, project, T0).reasons == ("created-in-future",)


# -- TTL bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize("max_ttl", [10, 60, 600])
def test_the_ttl_upper_bound_is_the_given_maximum(
    keys: Keys, ledger: SqliteLedger, project: Path, max_ttl: int
) -> None:
    now = T0 + timedelta(seconds=1)
    over = consume(
        keys, ledger, mint(keys, project, max_ttl + 1), project, now, max_ttl_seconds=max_ttl
    )
    assert (over.match.decision, over.reasons) == ("expired", ("ttl-out-of-range",))
    at_max = consume(
        keys, ledger, mint(keys, project, max_ttl), project, now, max_ttl_seconds=max_ttl
    )
    assert at_max.decision == "consumed"


@pytest.mark.parametrize("lifetime", [timedelta(0), -MS, timedelta(days=-1), timedelta(days=365)])
def test_a_signed_lifetime_out_of_range_is_rejected(
    keys: Keys, ledger: SqliteLedger, project: Path, lifetime: timedelta
) -> None:
    env = resigned(keys, mint(keys, project, 30), expiresAtIso=format_iso(T0 + lifetime))
    result = consume(keys, ledger, env, project, T0)
    assert (result.match.decision, result.reasons) == ("expired", ("ttl-out-of-range",))


# -- the ledger's prune watermark ---------------------------------------------------------------


def test_the_prune_watermark_is_exact_to_the_millisecond(tmp_path: Path) -> None:
    skew = timedelta(seconds=5)
    ledger = SqliteLedger.open(tmp_path / "l.sqlite3")
    ledger.prune(T0, skew)
    cutoff = T0 - skew
    assert ledger.try_consume("oce_at", cutoff, T0) == "forgotten"
    assert ledger.try_consume("oce_before", cutoff - MS, T0) == "forgotten"
    assert ledger.try_consume("oce_after", cutoff + MS, T0) == "inserted"
    ledger.close()


def test_the_prune_watermark_survives_a_reopen_and_refuses_through_the_consumer(
    keys: Keys, project: Path, tmp_path: Path
) -> None:
    path = tmp_path / "l.sqlite3"
    first = SqliteLedger.open(path)
    first.prune(T0 + timedelta(hours=1), timedelta(seconds=5))
    first.close()
    # The clock stepped back an hour: the envelope is in its lifetime, but the ledger has
    # already forgotten everything that expired by then and cannot prove single use.
    second = SqliteLedger.open(path)
    try:
        env = mint(keys, project, 30)
        result = consume(keys, second, env, project, T0 + timedelta(seconds=1))
        assert (result.decision, result.match.decision, result.reasons) == (
            "rejected",
            "expired",
            ("older-than-ledger-prune",),
        )
        assert (result.evidence_id, result.summary) == (
            env["details"]["evidenceId"],
            "rejected (expired): expired before the ledger's prune point (the clock stepped back)",
        )
        assert second.count() == 0
    finally:
        second.close()


# -- what a rejection reports (the audit record of a rejection is made from it) ----------------


def test_rejections_before_parsing_name_no_evidence_and_say_why(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    missing = consume(keys, ledger, None, project, T0)  # type: ignore[arg-type]
    assert (missing.evidence_id, missing.summary) == (
        None,
        "rejected (missing): no envelope was given",
    )
    malformed = check_and_consume(
        "{not json", pending(project), keyring=keys.keyring(), ledger=ledger, now=T0
    )
    assert malformed.evidence_id is None
    assert malformed.summary.startswith("rejected (malformed): ")
    detail = malformed.summary.removeprefix("rejected (malformed): ")
    assert detail and detail != "None"


def test_rejections_after_parsing_name_the_evidence_and_say_why(
    keys: Keys, ledger: SqliteLedger, project: Path, tmp_path: Path
) -> None:
    env = mint(keys, project, 30)
    eid = env["details"]["evidenceId"]
    other = KeyStore.open(tmp_path / "other-home")
    stranger, _ = other.ensure_key()
    foreign = mint_envelope(
        stranger, pending(project), origin="runtime-ui-confirm", ttl_seconds=30, now=T0
    ).model_dump(mode="json", exclude_none=True)
    unknown = consume(keys, ledger, foreign, project, T0)
    assert unknown.evidence_id == foreign["details"]["evidenceId"]
    assert unknown.summary == f"rejected (untrusted): key {stranger.key_id} cannot verify"

    bad_sig = resigned(keys, env, scope="/elsewhere")
    bad_sig["details"]["scope"] = env["details"]["scope"]
    forged = consume(keys, ledger, bad_sig, project, T0)
    assert (forged.evidence_id, forged.summary) == (
        eid,
        "rejected (untrusted): the signature does not verify",
    )
    late = consume(keys, ledger, env, project, T0 + timedelta(seconds=30))
    assert (late.evidence_id, late.summary) == (
        eid,
        f"rejected (expired): expired at {env['details']['expiresAtIso']}",
    )
    early = consume(keys, ledger, env, project, T0 - timedelta(seconds=6))
    assert (early.evidence_id, early.summary) == (
        eid,
        f"rejected (not-yet-valid): {env['details']['createdAtIso']}",
    )
    assert consume(keys, ledger, env, project, T0).decision == "consumed"
    replay = consume(keys, ledger, env, project, T0)
    assert (replay.evidence_id, replay.summary) == (
        eid,
        "rejected (consumed): this evidence was already consumed",
    )


def test_an_origin_outside_the_trusted_set_is_untrusted(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    # Every origin the model accepts is trusted by default; a consumer may trust fewer.
    env = mint(keys, project, 30)
    result = consume(
        keys, ledger, env, project, T0, trusted_origins=frozenset({"operator-contract-review"})
    )
    assert (result.decision, result.match.decision, result.reasons) == (
        "rejected",
        "untrusted",
        ("origin-untrusted",),
    )
    assert (result.evidence_id, result.summary) == (
        env["details"]["evidenceId"],
        "rejected (untrusted): origin runtime-ui-confirm",
    )
    assert ledger.count() == 0
    assert consume(keys, ledger, env, project, T0).decision == "consumed"


def test_time_and_match_rejections_name_the_evidence(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project, 30)
    eid = env["details"]["evidenceId"]
    too_long = consume(keys, ledger, env, project, T0, max_ttl_seconds=29)
    assert (too_long.evidence_id, too_long.summary) == (
        eid,
        "rejected (expired): lifetime 0:00:30",
    )
    early = consume(keys, ledger, env, project, T0 - timedelta(seconds=6))
    assert early.evidence_id == eid
    late = consume(keys, ledger, env, project, T0 + timedelta(seconds=31))
    assert late.evidence_id == eid
    safe = check_and_consume(env, None, keyring=keys.keyring(), ledger=ledger, now=T0)
    assert (safe.evidence_id, safe.summary) == (
        eid,
        "rejected (mismatch): the pending call needs no confirmation",
    )
    other = compute_fingerprint("protected", "write", {"path": ".env", "content": "B"}, project)
    mismatch = check_and_consume(env, other, keyring=keys.keyring(), ledger=ledger, now=T0)
    assert (mismatch.evidence_id, mismatch.summary) == (
        eid,
        "rejected (mismatch): payload-hash-mismatch",
    )
    assert ledger.count() == 0


def test_every_mismatched_field_is_named(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project, 30)
    other = compute_fingerprint("protected", "edit", {"path": ".env", "edits": []}, project)
    result = check_and_consume(env, other, keyring=keys.keyring(), ledger=ledger, now=T0)
    assert result.reasons == ("tool-name-mismatch", "payload-hash-mismatch")
    assert result.summary == "rejected (mismatch): tool-name-mismatch, payload-hash-mismatch"
