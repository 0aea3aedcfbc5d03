"""The monitor consumer's check (docs/monitor.md, "The consumer's checks and reason codes").

Seven checks, in order; the first that fails decides. The pending call's
fingerprint is recomputed by the caller from the call itself; nothing in the
envelope's fingerprint fields is trusted until it has been compared.

    1 structure   -> malformed        5 time          -> expired / not-yet-valid
    2 key         -> untrusted        6 exact match   -> mismatch
    3 signature   -> untrusted       (6a dialog       -> not-dialog, only with require_dialog)
    4 origin      -> untrusted       (6b operator     -> not-operator-signed, only with
   (4a operator   -> untrusted)                          require_operator_signature)
                                      7 single use    -> consumed (a replay)
                                     (7a sign count   -> untrusted, operator-sign-count)

4a runs when the envelope carries the operator's own WebAuthn signature
(:func:`guard._operator.check_operator_signature`, against the keyring's enrolled
credentials): the guard's key alone, even stolen, cannot make one. 7a: the ledger keeps the
highest sign count it has seen per credential; a count that does not go up after the id was
spent means a cloned authenticator, and the evidence is refused (and stays spent).

6a comes after every check of the envelope itself and before the ledger is touched: a
``not-dialog`` answer says the evidence is genuine, current and for this very call, but a grant
covered it (``origin: runtime-grant``) where this consumer wants the operator's own dialog; and
nothing was consumed, so a consumer that accepts grants can still consume it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import Any, get_args

from audit import CanonicalizationError
from audit.wire import Origin, b64url_decode, parse_iso
from guard._errors import MalformedEvidence
from guard._evidence.envelope import ParsedEnvelope, parse_envelope, signing_message
from guard._evidence.fingerprint import Fingerprint
from guard._evidence.keys import PublicKeyring
from guard._evidence.models import (
    MAX_TTL_SECONDS,
    ConsumeResult,
    EvidenceDetails,
    MatchDecision,
    MatchResult,
)
from guard._operator import OperatorCheck, check_operator_signature
from guard._storage import ConsumptionLedger

__all__ = ["DEFAULT_SKEW", "TRUSTED_ORIGINS", "check_and_consume"]

DEFAULT_SKEW = timedelta(seconds=5)
TRUSTED_ORIGINS: frozenset[Origin] = frozenset(get_args(Origin))

_FIELDS = (
    ("action_kind", "action-kind-mismatch"),
    ("tool_name", "tool-name-mismatch"),
    ("path", "path-mismatch"),
    ("scope", "scope-mismatch"),
    ("payload_hash", "payload-hash-mismatch"),
)


def _reject(
    decision: MatchDecision, reasons: tuple[str, ...], evidence_id: str | None, summary: str
) -> ConsumeResult:
    return ConsumeResult(
        decision="rejected",
        match=MatchResult(decision=decision, reasons=reasons),
        reasons=reasons,
        evidence_id=evidence_id,
        summary=f"rejected ({decision}): {summary}",
    )


def check_and_consume(
    raw: Mapping[str, Any] | str | bytes | None,
    pending: Fingerprint | None,
    *,
    keyring: PublicKeyring,
    ledger: ConsumptionLedger,
    now: datetime,
    skew: timedelta = DEFAULT_SKEW,
    max_ttl_seconds: int = MAX_TTL_SECONDS,
    trusted_origins: Collection[str] = TRUSTED_ORIGINS,
    tool_call_id: str | None = None,
    call_checked_elsewhere: bool = False,
    require_dialog: bool = False,
    require_operator_signature: bool = False,
    parsed: ParsedEnvelope | None = None,
) -> ConsumeResult:
    """Run the seven checks and, if all pass, consume the id. Never authorizes anything.

    ``pending`` is ``None`` when the pending call is local-safe: no evidence can
    match it. ``tool_call_id`` is the pending call's id: evidence bound to another call is a
    ``tool-call-id-mismatch``, and evidence bound to a call is a ``call-id-required`` when no
    id is given, unless ``call_checked_elsewhere`` says the consumer ties the evidence to the
    call some other way (evidence minted without a call id is bound by its fingerprint
    alone). Neither is consumed. ``require_dialog``: evidence
    that a scoped grant covered (``origin: runtime-grant``) is rejected, ``not-dialog`` /
    ``grant-covered``, once checks 1 to 6 pass, and is not consumed.
    ``require_operator_signature``: evidence without the operator's own signature is
    rejected, ``not-operator-signed`` / ``no-operator-signature``, and is not consumed.
    ``parsed``: ``raw`` already parsed (:class:`ParsedEnvelope`), so it is not parsed twice.
    """
    if raw is None or raw in ("", b"", {}):
        return _reject("missing", ("no-evidence",), None, "no envelope was given")
    # 1. structure
    try:
        envelope, raw_details = parse_envelope(raw) if parsed is None else parsed.get()
    except MalformedEvidence as exc:
        return _reject("malformed", (exc.code,), None, exc.detail)
    details: EvidenceDetails = envelope.details
    eid = details.evidence_id
    # 2. key (a retired key verifies only evidence created before its retirement; the
    # claimed createdAt is covered by the signature checked next)
    created = parse_iso(details.created_at_iso, "createdAtIso")
    public = keyring.usable_key(details.key_id, now, created)
    if public is None:
        code = "key-retired" if details.key_id in keyring.keys else "unknown-key"
        return _reject("untrusted", (code,), eid, f"key {details.key_id} cannot verify")
    # 3. signature
    signature = b64url_decode(details.signature, 64)
    try:
        message = signing_message(raw_details)
    except CanonicalizationError as exc:
        return _reject("malformed", ("not-canonicalizable",), eid, exc.code)
    if signature is None or not PublicKeyring.verify(public, signature, message):
        return _reject("untrusted", ("signature-invalid",), eid, "the signature does not verify")
    # 4. origin
    if details.origin not in trusted_origins:
        return _reject("untrusted", ("origin-untrusted",), eid, f"origin {details.origin}")
    # 4a. the operator's own signature, when the envelope carries one
    operator: OperatorCheck | None = None
    if details.operator_signature is not None:
        operator = check_operator_signature(
            raw_details, details.operator_signature, keyring.operators
        )
        if operator.reason is not None:
            return _reject(
                "untrusted", (operator.reason,), eid, "the operator's signature does not verify"
            )
    # 5. time
    expires = parse_iso(details.expires_at_iso, "expiresAtIso")
    lifetime = expires - created
    if lifetime <= timedelta(0) or lifetime > timedelta(seconds=max_ttl_seconds):
        return _reject("expired", ("ttl-out-of-range",), eid, f"lifetime {lifetime}")
    if now < created - skew:
        return _reject("not-yet-valid", ("created-in-future",), eid, details.created_at_iso)
    if now >= expires:
        return _reject("expired", ("expired",), eid, f"expired at {details.expires_at_iso}")
    # 6. exact match against the recomputed pending fingerprint
    if pending is None:
        return _reject(
            "mismatch", ("action-kind-mismatch",), eid, "the pending call needs no confirmation"
        )
    claimed = details.fingerprint()
    mismatched = tuple(
        code for attr, code in _FIELDS if getattr(claimed, attr) != getattr(pending, attr)
    )
    if details.tool_call_id is not None:
        if tool_call_id is not None and details.tool_call_id != tool_call_id:
            mismatched = (*mismatched, "tool-call-id-mismatch")
        elif tool_call_id is None and not call_checked_elsewhere:
            # Default: evidence minted for one call is never consumed for another because
            # the consumer forgot to say which call is pending.
            mismatched = (*mismatched, "call-id-required")
    if mismatched:
        return _reject("mismatch", mismatched, eid, ", ".join(mismatched))
    # 6a. a dialog of its own, when the consumer asks for one (before the ledger: not consumed)
    if require_dialog and details.origin == "runtime-grant":
        return _reject(
            "not-dialog",
            ("grant-covered",),
            eid,
            "a scoped grant covered this call, not a dialog of its own; nothing was consumed",
        )
    # 6b. the operator's own signature, when the consumer requires one (not consumed either)
    if require_operator_signature and operator is None:
        return _reject(
            "not-operator-signed",
            ("no-operator-signature",),
            eid,
            "the evidence carries no signature of the operator's own authenticator; "
            "nothing was consumed",
        )
    # 7. single use
    outcome = ledger.try_consume(eid, expires, now)
    if outcome == "already-consumed":
        return _reject("consumed", ("replay",), eid, "this evidence was already consumed")
    if outcome == "forgotten":
        # The clock stepped back past a prune: the ledger can no longer prove single use.
        return _reject(
            "expired",
            ("older-than-ledger-prune",),
            eid,
            "expired before the ledger's prune point (the clock stepped back)",
        )
    # 7a. the authenticator's counter went up since the last assertion this ledger saw
    if (
        operator is not None
        and operator.credential is not None
        and not ledger.advance_sign_count(operator.credential.credential_id, operator.sign_count)
    ):
        return _reject(
            "untrusted",
            ("operator-sign-count",),
            eid,
            "the authenticator's sign count did not go up (a cloned authenticator?); the "
            "evidence is spent",
        )
    return ConsumeResult(
        decision="consumed",
        match=MatchResult(decision="match", reasons=()),
        reasons=(),
        evidence_id=eid,
        operator_signature="verified" if operator is not None else "none",
        summary=f"consumed {eid} for {pending.tool_name}; report-only, authorizes nothing",
    )
