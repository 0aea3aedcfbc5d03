"""The facade's base: keys, evaluate, record, and appending to the audit log for a session.

:class:`GuardBase` holds one home's keys, ledger, audit log, policy cache and grant desk;
the other modules of this package add the concerns of :class:`guard.Guard` on top of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from audit import shorten
from audit.log import AuditLog, redact_preview
from audit.wire import (
    MAX_OPERATOR_REASON_CHARS,
    AuditRecord,
    ConfirmationDeclinedData,
    ConfirmationRecordedData,
    EventData,
    GrantUseRef,
    KeyRotatedData,
    Origin,
    SessionRef,
    utc_now,
)
from guard._approvals import Approver
from guard._errors import BadInputError, TtlError
from guard._evidence import (
    DEFAULT_TTL_SECONDS,
    MAX_TTL_SECONDS,
    CoveredBy,
    Evaluation,
    Fingerprint,
    Keyring,
    KeyStore,
    PublicKeyring,
    RecordResult,
    Reservation,
    Signer,
    mint_envelope,
    payload_hash,
)
from guard._facade.consumer import ClassifiedCall, check_tool_call_id, classify_call
from guard._grants import GrantDesk, GrantStore
from guard._home import GRANTS_FILE
from guard._operator import OperatorCheck, OperatorSignature
from guard._operator import check_operator_signature as _check_operator
from guard._policy import PI_TOOLS, PolicyCache, Verdict
from guard._storage import SyncedLedger

__all__ = [
    "SESSION_COUNTS",
    "BlockReason",
    "DeclineReason",
    "GuardBase",
    "LateDeclineReason",
    "fingerprint_fields",
    "operator_reason_text",
    "preview_of",
]

DeclineReason = Literal["declined", "timeout", "no-ui", "sidecar-unavailable", "stopped"]
BlockReason = Literal["sidecar-unavailable", "sandbox-unavailable", "stopped"]
"""Why the guard stopped a call without asking anyone (any call, local-safe included)."""
# A late decline may also be a yes the sidecar died before recording: the call was blocked.
LateDeclineReason = (
    DeclineReason
    | Literal["confirmed-unrecorded", "input-changed-after-decision", "sandbox-unavailable"]
)


def operator_reason_text(reason: str | None) -> str | None:
    """The operator's decline reason as it is kept and shown: one line, secrets redacted,
    at most :data:`audit.MAX_OPERATOR_REASON_CHARS` characters; ``None`` when nothing is left.
    """
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise BadInputError("operator reason", "must be text", type(reason).__name__)
    return redact_preview(reason, limit=MAX_OPERATOR_REASON_CHARS) or None


SESSION_COUNTS = ("asked", "confirmed", "declined", "blocked", "executed", "covered")
_OPERATOR_NO = ("declined", "timeout")


def _count(counts: dict[str, int], event: str, data: Mapping[str, Any]) -> None:
    """What one record adds to a session's counts (``/guard``, ``session.ended``)."""
    if event == "confirmation.recorded" and data.get("coveredBy"):
        counts["covered"] += 1
    elif event == "confirmation.recorded":
        counts["asked"] += 1
        counts["confirmed"] += 1
    elif event == "confirmation.declined" and data.get("reason") in _OPERATOR_NO:
        counts["asked"] += 1
        counts["declined"] += 1
    elif event == "confirmation.declined":
        counts["blocked"] += 1
    elif event == "tool.executed":
        counts["executed"] += 1


def fingerprint_fields(fp: Fingerprint | None) -> dict[str, Any]:
    """A call's fingerprint as an event model's keyword arguments (``action_kind``,
    ``tool_name``, ``path``, ``scope``, ``payload_hash``); none for no fingerprint."""
    return {} if fp is None else fp.model_dump(mode="json", by_alias=False, exclude_none=True)


def preview_of(tool_name: str, tool_input: Mapping[str, Any], verdict: Verdict) -> str:
    """What the call is, in one redacted line: the command, the path, or (a tool the guard
    does not know) its arguments as compact JSON."""
    command = tool_input.get("command")
    if isinstance(command, str):
        return redact_preview(command)
    if verdict.path is not None and tool_name in PI_TOOLS:
        return redact_preview(verdict.path)
    if tool_name in PI_TOOLS or not tool_input:
        return ""
    return redact_preview(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":")))


def _check_record(ttl_seconds: int, tool_call_id: str | None) -> None:
    """A record's lifetime is 1..600 seconds (refused, not clipped) and its call id well formed."""
    if type(ttl_seconds) is not int or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
        raise TtlError(ttl_seconds, MAX_TTL_SECONDS)
    check_tool_call_id(tool_call_id)


class GuardBase:
    """Keys, ledger and audit log of one guard home; :class:`guard.Guard` builds on it."""

    def __init__(
        self,
        home: Path,
        keys: KeyStore,
        signer: Signer,
        audit: AuditLog,
        ledger: SyncedLedger,
        *,
        preview: bool = True,
    ) -> None:
        self.home = home
        self._keys = keys
        self._signer = signer
        self._keyring_stamp = self._stamp()
        self._keyring = keys.public_keyring(signer)
        self.audit = audit
        self.ledger = ledger
        self._preview = preview
        self.session: dict[str, Any] | None = None  # see attribute()
        self.session_counts = dict.fromkeys(SESSION_COUNTS, 0)
        self.key_created = False
        # Sees every record once it is durable (the sidecar's telemetry export); it must
        # neither raise nor wait.
        self.observer: Callable[[AuditRecord], None] | None = None
        self.classifier = PolicyCache(home)
        self.grants = GrantDesk(
            GrantStore(home / GRANTS_FILE), self._current_signer, self.public_keyring, self._append
        )

    # -- keys -------------------------------------------------------------

    @property
    def key_id(self) -> str:
        return self._current_signer().key_id

    def _stamp(self) -> tuple[int, int] | None:
        try:
            info = self._keys.keyring_path.stat()
        except FileNotFoundError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def _refresh_keys(self) -> None:
        # Another process (``pi-guard keys rotate``) may have rotated the key.
        stamp = self._stamp()
        if stamp != self._keyring_stamp:
            self._signer, self._keyring = self._keys.load_trusted()
            self._keyring_stamp = stamp
            # Heads must be signed by the active key, not one that was just retired.
            self.audit.use_signer(self._signer)

    def _current_signer(self) -> Signer:
        self._refresh_keys()
        return self._signer

    def keyring(self) -> Keyring:
        """The public keyring as stored: what an auditor or monitor needs."""
        return self._keys.keyring()

    def public_keyring(self) -> PublicKeyring:
        self._refresh_keys()
        return self._keyring

    def rotate_key(self) -> tuple[str, str]:
        """Retire the active key, install a new one, audit it. Returns ``(old, new)`` key ids."""
        old, signer = self._keys.rotate()
        self._refresh_keys()
        self._append(KeyRotatedData(old_key_id=old, new_key_id=signer.key_id))
        return old, signer.key_id

    def check_operator(
        self, reservation: Reservation, signature: OperatorSignature
    ) -> OperatorCheck:
        """Whether ``signature`` is the operator's over ``reservation``'s statement."""
        return _check_operator(reservation.statement, signature, self.public_keyring().operators)

    # -- evaluate ---------------------------------------------------------

    def classify(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> ClassifiedCall:
        """Judge a pending call once (:func:`guard._facade.consumer.classify_call`): what the
        ``*_call`` methods take, so one request classifies its call once."""
        return classify_call(self.classifier, tool_name, tool_input, cwd)

    def evaluate(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> Evaluation:
        """Classify a pending call and, unless it is local-safe, compute its fingerprint."""
        return self.evaluate_call(self.classify(tool_name, tool_input, cwd))

    def evaluate_call(self, call: ClassifiedCall) -> Evaluation:
        """What the guard thinks of a call it has classified (:meth:`evaluate`)."""
        self._refresh_keys()
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
        and is ignored for a "yes". ``covered_by``: the yes is a grant's (see :meth:`covered`), the
        evidence's origin is ``runtime-grant``. ``approver``: which screen answered (the
        record says so). ``signed``: the operator's authenticator signed the statement of
        this reservation (:meth:`reserve_evidence`): the evidence takes its id and lifetime
        and carries the signature, checked again here; a reservation for another call or a
        signature that does not verify is ``invalid`` and nothing is minted.
        """
        _check_record(ttl_seconds, tool_call_id)
        evaluation = self.evaluate_call(call)
        fp = evaluation.fingerprint
        preview = evaluation.preview if evaluation.preview and self._preview else None
        rules = list(evaluation.rule_ids[:16]) or None
        if evaluation.verdict == "allow" or fp is None:
            return RecordResult(
                decision="invalid",
                reasons=("action-not-protected",),
                summary=f"{evaluation.summary}; nothing to record",
            )
        if evaluation.verdict == "block":
            self._append(
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
            self._append(
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
        signer = self._current_signer()
        credential: str | None = None
        if signed is not None:
            reservation, signature = signed
            check = self.check_operator(reservation, signature)
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
        self._append(
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

    # -- sessions: every record names the session it belongs to ------------

    def attribute(self, session_id: str | None, session_file: str | None = None) -> None:
        """Every record this guard appends from now on names pi's session ``session_id``
        (its file, if it has one) and this process; ``None`` stops naming one."""
        if session_id is None:
            self.session = None
            return
        ref: dict[str, Any] = {"id": shorten(session_id, 128), "guardPid": os.getpid()}
        if session_file:
            ref["file"] = shorten(session_file, 4096)
        if ref != self.session:
            self.session_counts = dict.fromkeys(SESSION_COUNTS, 0)
        self.session = ref

    def _append(self, typed: EventData) -> AuditRecord:
        """Append one typed event, naming the session it belongs to where the event can (a
        record delivered late names the session the shim kept it in, or none)."""
        late = getattr(typed, "delivered_late", None)
        if (
            self.session is not None
            and not late
            and "session" in type(typed).model_fields
            and getattr(typed, "session", None) is None
        ):
            typed = typed.model_copy(update={"session": SessionRef.model_validate(self.session)})
        record = self.audit.append(typed)
        if not late:  # a late record belongs to the session it names
            _count(self.session_counts, record.event, record.data)
        if self.observer is not None:
            self.observer(record)
        return record
