"""A call judged and answered, on the facade: what the guard thinks of it, and the operator's
answer about it (a yes mints signed evidence).

Contract: every verb takes the call itself (or a :class:`ClassifiedCall` classified in the
same request), never a fingerprint from the caller; ``record`` appends its record before the
evidence it mints leaves the process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypedDict

from audit.wire import (
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    GrantUseRef,
    Origin,
    utc_now,
)
from guard._approvals import Approver
from guard._errors import TtlError
from guard._evidence import (
    DEFAULT_TTL_SECONDS,
    MAX_TTL_SECONDS,
    CoveredBy,
    Evaluation,
    RecordResult,
    Reservation,
    mint_envelope,
    payload_hash,
)
from guard._facade.consumer import ClassifiedCall, check_tool_call_id, classify_call
from guard._facade.core import Core
from guard._facade.fields import (
    DeclineReason,
    fingerprint_fields,
    operator_reason_text,
    preview_of,
)
from guard._operator import OperatorSignature
from guard._operator import check_operator_signature as _check_operator

__all__ = ["Calls", "RecordOptions"]


def _check_record(ttl_seconds: int, tool_call_id: str | None) -> None:
    """A record's lifetime is 1..600 seconds (refused, not clipped) and its call id well formed."""
    if type(ttl_seconds) is not int or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
        raise TtlError(ttl_seconds, MAX_TTL_SECONDS)
    check_tool_call_id(tool_call_id)


class RecordOptions(TypedDict, total=False):
    """What a record may say beside the operator's yes or no (:meth:`Calls.record_call`); a
    key left out takes that method's default."""

    ttl_seconds: int
    tool_call_id: str | None
    origin: Origin
    decline_reason: DeclineReason
    operator_reason: str | None
    covered_by: CoveredBy | None
    approver: Approver | None
    signed: tuple[Reservation, OperatorSignature] | None


class Calls:
    """``evaluate`` and ``record``: a call judged, and the operator's answer about it."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def classify(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> ClassifiedCall:
        """Judge a pending call once (:func:`guard._facade.consumer.classify_call`): what the
        ``*_call`` methods take, so one request classifies its call once."""
        return classify_call(self._core.classifier, tool_name, tool_input, cwd)

    def evaluate(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> Evaluation:
        """Classify a pending call and, unless it is local-safe, compute its fingerprint."""
        return self.evaluate_call(self.classify(tool_name, tool_input, cwd))

    def evaluate_call(self, call: ClassifiedCall) -> Evaluation:
        """What the guard thinks of a call it has classified (:meth:`evaluate`)."""
        self._core.refresh_keys()
        name, tool_input, verdict = call.name, call.input, call.verdict
        if call.fingerprint is None:
            payload_hash(tool_input)  # refuse inputs with no canonical form, even when safe
        preview = preview_of(name, tool_input, verdict)
        if verdict.verdict == "allow":
            summary = f"{name}: local-safe, no confirmation needed"
        elif verdict.verdict == "block":
            summary = f"{name}: blocked by policy ({', '.join(verdict.rule_ids)})"
        else:
            summary = f"{name}: {verdict.action_kind}, operator confirmation required"
        return Evaluation(
            verdict=verdict.verdict,
            action_kind=verdict.action_kind,
            requires_confirmation=verdict.verdict == "confirm",
            fingerprint=call.fingerprint,
            reasons=verdict.reasons,
            rule_ids=verdict.rule_ids,
            targets=verdict.targets,
            config_problems=call.problems,
            preview=preview,
            summary=summary,
        )

    # -- record -----------------------------------------------------------

    def record(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        confirmed: bool,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
        origin: Origin = "operator-contract-review",
        decline_reason: DeclineReason = "declined",
        operator_reason: str | None = None,
        covered_by: CoveredBy | None = None,
        approver: Approver | None = None,
        signed: tuple[Reservation, OperatorSignature] | None = None,
    ) -> RecordResult:
        """Record the operator's answer about a call (:meth:`record_call` on the call as
        classified here: the fingerprint is computed from the call itself, never taken from
        the caller)."""
        _check_record(ttl_seconds, tool_call_id)
        return self.record_call(
            self.classify(tool_name, tool_input, cwd),
            confirmed=confirmed,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            origin=origin,
            decline_reason=decline_reason,
            operator_reason=operator_reason,
            covered_by=covered_by,
            approver=approver,
            signed=signed,
        )

    def record_call(
        self,
        call: ClassifiedCall,
        *,
        confirmed: bool,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
        origin: Origin = "operator-contract-review",
        decline_reason: DeclineReason = "declined",
        operator_reason: str | None = None,
        covered_by: CoveredBy | None = None,
        approver: Approver | None = None,
        signed: tuple[Reservation, OperatorSignature] | None = None,
    ) -> RecordResult:
        """Record the operator's answer about a call; a "yes" mints signed evidence.

        The fingerprint is ``call``'s, computed by this process from the call itself (in the
        same request), never taken from the caller. ``ttl_seconds`` outside 1..600 is
        refused, not clipped. ``operator_reason`` is what the operator said when declining;
        it goes into the ``confirmation.declined`` record (see :func:`operator_reason_text`)
        and is ignored for a "yes". ``covered_by``: the yes is a grant's (see
        :meth:`guard._facade.grants.Grants.covered`), the evidence's origin is
        ``runtime-grant``. ``approver``: which screen answered (the record says so).
        ``signed``: the operator's authenticator signed the statement of this reservation
        (:meth:`guard._facade.operators.Operators.reserve`): the evidence takes its id and
        lifetime and carries the signature, checked again here; a reservation for another
        call or a signature that does not verify is ``invalid`` and nothing is minted.
        """
        _check_record(ttl_seconds, tool_call_id)
        evaluation = self.evaluate_call(call)
        fp = evaluation.fingerprint
        preview = evaluation.preview if evaluation.preview and self._core.preview else None
        rules = list(evaluation.rule_ids[:16]) or None
        if evaluation.verdict == "allow" or fp is None:
            return RecordResult(
                decision="invalid",
                reasons=("action-not-protected",),
                summary=f"{evaluation.summary}; nothing to record",
            )
        if evaluation.verdict == "block":
            self._core.append(
                ConfirmationDeclinedData(
                    reason="blocked-by-policy",
                    **fingerprint_fields(fp),
                    tool_call_id=tool_call_id,
                    preview=preview,
                    approver=approver,
                    rule_ids=rules,
                )
            )
            return RecordResult(
                decision="invalid",
                reasons=("action-blocked-by-policy",),
                fingerprint=fp,
                summary=evaluation.summary,
            )
        if not confirmed:
            said = operator_reason_text(operator_reason)
            self._core.append(
                ConfirmationDeclinedData(
                    reason=decline_reason,
                    **fingerprint_fields(fp),
                    tool_call_id=tool_call_id,
                    preview=preview,
                    approver=approver,
                    rule_ids=rules,
                    operator_reason=said,
                )
            )
            return RecordResult(
                decision="declined",
                reasons=(decline_reason,),
                fingerprint=fp,
                summary=f"operator did not confirm ({decline_reason}); no evidence minted",
            )
        signer = self._core.signer()
        credential: str | None = None
        if signed is not None:
            reservation, signature = signed
            check = _check_operator(
                reservation.statement, signature, self._core.public_keyring().operators
            )
            fits = (
                reservation.fingerprint == fp
                and reservation.tool_call_id == tool_call_id
                and reservation.key_id == signer.key_id
                and origin == "runtime-ui-confirm"
                and covered_by is None
            )
            if not fits or check.reason is not None:
                why = check.reason or "operator-statement-mismatch"
                return RecordResult(
                    decision="invalid",
                    reasons=(why,),
                    fingerprint=fp,
                    summary=f"the operator's signature does not fit this call ({why})",
                )
            credential = signature.credential_id
        envelope = mint_envelope(
            signer,
            fp,
            origin="runtime-grant" if covered_by is not None else origin,
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
            covered_by=covered_by,
            approver=approver,
            reservation=signed[0] if signed is not None else None,
            operator_signature=signed[1] if signed is not None else None,
        )
        d = envelope.details
        grant = (
            GrantUseRef(grant_id=covered_by.grant_id, use=covered_by.use)
            if covered_by is not None
            else None
        )
        # The audit record is durable before the evidence leaves this process.
        self._core.append(
            ConfirmationRecordedData(
                evidence_id=d.evidence_id,
                origin=d.origin,
                **fingerprint_fields(fp),
                tool_call_id=tool_call_id,
                created_at_iso=d.created_at_iso,
                expires_at_iso=d.expires_at_iso,
                key_id=d.key_id,
                preview=preview,
                approver=approver,
                covered_by=grant,
                operator_credential=credential,
            )
        )
        return RecordResult(
            decision="recorded",
            reasons=(),
            evidence_id=d.evidence_id,
            expires_at_iso=d.expires_at_iso,
            envelope=envelope,
            fingerprint=fp,
            operator_signature="verified" if signed is not None else "none",
            summary=f"recorded {d.evidence_id}, expires {d.expires_at_iso}; report-only",
        )
