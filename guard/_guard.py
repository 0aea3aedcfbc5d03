"""The Python facade: one object that evaluates, records, consumes and audits.

    with Guard.open(home) as g:
        call = {"command": "rm -rf build"}
        g.evaluate("bash", call, cwd).requires_confirmation      # True
        rec = g.record("bash", call, cwd, confirmed=True)        # signed envelope
        g.consume(rec.envelope.model_dump(mode="json"), "bash", call, cwd).decision
        # "consumed" once, then "rejected" (replay)

Every result is report-only: nothing here authorizes or dispatches anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from audit import (
    EVENT_MODELS,
    MAX_OPERATOR_REASON_CHARS,
    AuditLog,
    AuditRecord,
    LogIntegrityError,
    Origin,
    VerifyResult,
    canonical_json,
    format_iso,
    parse_iso,
    redact_preview,
    sha256_prefixed,
    shorten,
    utc_now,
    verify_log,
)
from audit.lines import LogLineError, check_line, lines_backward, open_snapshot
from guard._anchors import anchor_dir
from guard._approvals.model import Approver
from guard._consumer import check_input, check_tool_call_id, consume_call
from guard._effects.model import Review
from guard._errors import BadInputError, LedgerError, TtlError
from guard._evidence.consume import DEFAULT_SKEW
from guard._evidence.envelope import Reservation, mint_envelope, reserve
from guard._evidence.fingerprint import (
    Fingerprint,
    compute_fingerprint,
    normalize_tool_name,
    payload_hash,
)
from guard._evidence.keys import Keyring, KeyStore, PublicKeyring, Signer
from guard._evidence.models import (
    DEFAULT_TTL_SECONDS,
    MAX_TTL_SECONDS,
    ConsumeResult,
    CoveredBy,
    Evaluation,
    RecordResult,
)
from guard._grants import GrantOffer, offers
from guard._grants.desk import GrantDesk, GrantLimits
from guard._grants.store import GrantRecord, GrantStore
from guard._home import AUDIT_LOG_FILE, GRANTS_FILE, ensure_private_dir, env, resolve_home
from guard._ledger_choice import LEDGER_FILE, open_ledger
from guard._logging import get_logger
from guard._operator import OperatorCheck, OperatorCredential, OperatorSignature
from guard._operator import check_operator_signature as _check_operator
from guard._plan import plan_input
from guard._policy import Verdict
from guard._policy.cache import PolicyCache
from guard._storage import SqliteLedger, SyncedLedger
from planning import PLANNERS, PlanResult

__all__ = [
    "AUDIT_LOG_FILE",
    "LEDGER_FILE",
    "BlockReason",
    "DeclineReason",
    "Guard",
    "LateDeclineReason",
    "operator_reason_text",
]

_log = get_logger("guard")
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


def _fingerprint_fields(fp: Fingerprint | None) -> dict[str, Any]:
    return {} if fp is None else fp.model_dump(mode="json", exclude_none=True)


def _preview(tool_name: str, tool_input: Mapping[str, Any], verdict: Verdict) -> str:
    command = tool_input.get("command")
    if isinstance(command, str):
        return redact_preview(command)
    if verdict.path is not None:
        return redact_preview(verdict.path)
    return ""


class Guard:
    """Keys, ledger and audit log of one guard home. Use :meth:`open`; close when done."""

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
        self.classifier = PolicyCache(home)
        self.grants = GrantDesk(
            GrantStore(home / GRANTS_FILE), self._current_signer, self.public_keyring, self._append
        )

    @classmethod
    def open(
        cls, home: str | os.PathLike[str] | None = None, *, preview: bool | None = None
    ) -> Guard:
        """Open (creating on first use) the guard home: key, keyring, ledger, audit log.

        ``preview``: whether audit records carry a short, secret-redacted preview of the
        command or path; default on, off when ``$PI_OPERATOR_GUARD_AUDIT_PREVIEWS`` is
        ``0``/``off``/``false``. The operator's dialog always shows the preview.
        """
        if preview is None:
            setting = (env("AUDIT_PREVIEWS") or "on").strip().lower()
            preview = setting not in ("0", "off", "false", "no")
        root = ensure_private_dir(resolve_home(home))
        keys = KeyStore.open(root)
        signer, created = keys.ensure_key()
        retired = keys.retired_on_create
        # Refuse (KeyringError) a keyring the signing key did not sign: an added key.
        keyring = keys.trusted_keyring(signer)
        # The head is verified against the trusted keyring before the log is extended
        # (re-read when a head names a key rotated in by another process), and every line
        # up to it against the head: from the latest anchored checkpoint, if one is kept.
        audit = AuditLog.open(
            root / AUDIT_LOG_FILE,
            signer,
            lambda: keys.public_keyring().public_keys(),
            previews=preview,
            anchors=anchor_dir(),
        )
        # A corrupt ledger is set aside: consume rebuilds it from the audit log first.
        # SQLite in the home unless the user's [ledger] or $PI_OPERATOR_GUARD_LEDGER names
        # a shared PostgreSQL ledger.
        ledger = open_ledger(root, set_aside_corrupt=True, lazy=True)
        guard = cls(root, keys, signer, audit, ledger, preview=preview)
        if created:
            guard.key_created = True
            audit.append("key.generated", {"keyId": signer.key_id})
            for entry in keyring.keys:
                if entry.key_id in retired:
                    audit.append(
                        "key.retired",
                        {
                            "keyId": entry.key_id,
                            "newKeyId": signer.key_id,
                            "retiredAtIso": entry.retired_at_iso,
                            "reason": "key-file-missing",
                        },
                    )
        try:
            ledger.prune(utc_now(), DEFAULT_SKEW)
        except LedgerError as exc:
            if isinstance(ledger, SqliteLedger):
                raise
            # A shared ledger out of reach: housekeeping waits for the next open; every
            # consume fails closed until the server is back.
            _log.warning("ledger-prune-failed", error=str(exc))
        return guard

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
        self._append("key.rotated", {"oldKeyId": old, "newKeyId": signer.key_id})
        return old, signer.key_id

    # -- the operator's own key (passkeys) --------------------------------

    def operators(self) -> tuple[OperatorCredential, ...]:
        """Every enrolled authenticator credential, active and removed (signed keyring)."""
        return tuple(self.public_keyring().operators.values())

    def enroll_operator(self, credential: OperatorCredential) -> OperatorCredential:
        """Add ``credential`` to the keyring's signed ``operators`` and audit
        ``operator.enrolled``; an id already listed is a :class:`BadInputError`."""

        def add(current: tuple[OperatorCredential, ...]) -> tuple[OperatorCredential, ...]:
            if any(c.credential_id == credential.credential_id for c in current):
                raise BadInputError("credential", "is already enrolled", credential.credential_id)
            return (*current, credential)

        self._keys.change_operators(add)
        self._refresh_keys()
        self._append(
            "operator.enrolled",
            credential.model_dump(
                mode="json", include={"credential_id", "label", "algorithm", "rp_id", "origin"}
            ),
        )
        return credential

    def remove_operator(self, credential_id: str) -> OperatorCredential:
        """Mark credential ``credential_id`` removed (it stays listed, so what it signed is
        refused by name) and audit ``operator.removed``; an unknown or already removed id is a
        :class:`BadInputError`."""
        removed: list[OperatorCredential] = []

        def drop(current: tuple[OperatorCredential, ...]) -> tuple[OperatorCredential, ...]:
            kept = []
            for c in current:
                if c.credential_id == credential_id and c.status == "active":
                    c = c.model_copy(
                        update={"status": "removed", "removed_at_iso": format_iso(utc_now())}
                    )
                    removed.append(c)
                kept.append(c)
            if not removed:
                raise BadInputError(
                    "credential", "no enrolled credential has this id", credential_id
                )
            return tuple(kept)

        self._keys.change_operators(drop)
        self._refresh_keys()
        gone = removed[0]
        self._append("operator.removed", {"credentialId": gone.credential_id, "label": gone.label})
        return gone

    def reserve_evidence(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
    ) -> Reservation | None:
        """The id, lifetime and approval statement of the evidence a yes to this call will
        mint (the operator's authenticator signs the statement first); ``None`` when the call
        needs no confirmation or is blocked."""
        if type(ttl_seconds) is not int or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise TtlError(ttl_seconds, MAX_TTL_SECONDS)
        check_tool_call_id(tool_call_id)
        evaluation = self.evaluate(tool_name, tool_input, cwd)
        if evaluation.verdict != "confirm" or evaluation.fingerprint is None:
            return None
        return reserve(
            self.key_id,
            evaluation.fingerprint,
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
        )

    def check_operator(
        self, reservation: Reservation, signature: OperatorSignature
    ) -> OperatorCheck:
        """Whether ``signature`` is the operator's over ``reservation``'s statement."""
        return _check_operator(reservation.statement, signature, self.public_keyring().operators)

    # -- evaluate ---------------------------------------------------------

    def evaluate(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> Evaluation:
        """Classify a pending call and, unless it is local-safe, compute its fingerprint."""
        self._refresh_keys()
        name = normalize_tool_name(tool_name)
        tool_input = check_input(tool_input)
        workdir = Path(cwd)
        verdict, policy = self.classifier.classify(name, tool_input, workdir)
        fingerprint = None
        if verdict.action_kind != "local-safe":
            fingerprint = compute_fingerprint(
                verdict.action_kind, name, tool_input, workdir, path=verdict.path
            )
        else:
            payload_hash(tool_input)  # refuse inputs with no canonical form, even when safe
        preview = _preview(name, tool_input, verdict)
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
            fingerprint=fingerprint,
            reasons=verdict.reasons,
            rule_ids=verdict.rule_ids,
            targets=verdict.targets,
            config_problems=tuple(str(problem) for problem in policy.problems),
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
        """Record the operator's answer about a call; a "yes" mints signed evidence.

        The fingerprint is computed here from the call itself, never taken from
        the caller. ``ttl_seconds`` outside 1..600 is refused, not clipped.
        ``operator_reason`` is what the operator said when declining; it goes into the
        ``confirmation.declined`` record (see :func:`operator_reason_text`) and is ignored
        for a "yes". ``covered_by``: the yes is a grant's (see :meth:`covered`), the
        evidence's origin is ``runtime-grant``. ``approver``: which screen answered (the
        record says so). ``signed``: the operator's authenticator signed the statement of
        this reservation (:meth:`reserve_evidence`): the evidence takes its id and lifetime
        and carries the signature, checked again here; a reservation for another call or a
        signature that does not verify is ``invalid`` and nothing is minted.
        """
        if type(ttl_seconds) is not int or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise TtlError(ttl_seconds, MAX_TTL_SECONDS)
        check_tool_call_id(tool_call_id)
        evaluation = self.evaluate(tool_name, tool_input, cwd)
        fp = evaluation.fingerprint
        preview = {"preview": evaluation.preview} if evaluation.preview and self._preview else {}
        call = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        if approver is not None:
            preview = {**preview, "approver": approver}
        if evaluation.verdict == "allow" or fp is None:
            return RecordResult(
                decision="invalid",
                reasons=("action-not-protected",),
                summary=f"{evaluation.summary}; nothing to record",
            )
        if evaluation.verdict == "block":
            self._append(
                "confirmation.declined",
                {"reason": "blocked-by-policy", **_fingerprint_fields(fp), **call, **preview},
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
                "confirmation.declined",
                {
                    "reason": decline_reason,
                    **_fingerprint_fields(fp),
                    **call,
                    **preview,
                    **({"operatorReason": said} if said else {}),
                },
            )
            return RecordResult(
                decision="declined",
                reasons=(decline_reason,),
                fingerprint=fp,
                summary=f"operator did not confirm ({decline_reason}); no evidence minted",
            )
        signer = self._current_signer()
        operator: dict[str, str] = {}
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
            operator = {"operatorCredential": signature.credential_id}
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
            {"coveredBy": {"grantId": covered_by.grant_id, "use": covered_by.use}}
            if covered_by is not None
            else {}
        )
        # The audit record is durable before the evidence leaves this process.
        self._append(
            "confirmation.recorded",
            {
                "evidenceId": d.evidence_id,
                "origin": d.origin,
                **_fingerprint_fields(fp),
                **call,
                "createdAtIso": d.created_at_iso,
                "expiresAtIso": d.expires_at_iso,
                "keyId": d.key_id,
                **preview,
                **grant,
                **operator,
            },
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

    # -- consume ----------------------------------------------------------

    def consume(
        self,
        envelope: Mapping[str, Any] | str | bytes | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        require_dialog: bool = False,
        require_operator_signature: bool = False,
    ) -> ConsumeResult:
        """Check ``envelope`` against the pending call (recomputed here) and consume it once.

        ``tool_call_id``: the pending call's id, when the consumer knows it; evidence bound
        to another call is rejected (``tool-call-id-mismatch``). ``require_dialog``: evidence
        a scoped grant covered (``origin: runtime-grant``) is rejected (``not-dialog`` /
        ``grant-covered``) and not consumed, so a consumer that accepts grants still can.
        ``require_operator_signature`` (or the user's ``[evidence]
        require_operator_signature``): evidence without the operator's own signature is
        rejected (``not-operator-signed`` / ``no-operator-signature``) and not consumed.

        The ledger is first brought up to date from the audit log's ``evidence.consumed``
        records (a lost or stale ledger never forgets); if the log cannot be read or
        verified this raises :class:`LedgerError` and nothing is consumed.
        """
        result, pending = consume_call(
            envelope,
            tool_name,
            tool_input,
            cwd,
            classifier=self.classifier,
            keyring=self.public_keyring(),
            ledger=self.ledger,
            log_path=self.audit.path,
            require_log=True,
            tool_call_id=tool_call_id,
            require_dialog=require_dialog,
            require_operator_signature=require_operator_signature,
        )
        call: dict[str, Any] = {"toolName": normalize_tool_name(tool_name)}
        if tool_call_id is not None:
            call["toolCallId"] = tool_call_id
        fields = {**call, **_fingerprint_fields(pending)}
        eid = {"evidenceId": result.evidence_id} if result.evidence_id else {}
        if result.decision == "consumed":
            self._append("evidence.consumed", {**eid, **fields})
        else:
            self._append(
                "evidence.rejected",
                {
                    **eid,
                    "decision": result.match.decision,
                    "reasons": list(result.reasons),
                    **fields,
                },
            )
        return result

    # -- tool results -----------------------------------------------------

    def tool_executed(
        self,
        tool_call_id: str,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        is_error: bool,
        evidence_id: str | None = None,
        *,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit that a call ran, with the payload hash of the input *as executed*.

        ``late``: ``deliveredLate``, ``spoolId`` and ``occurredAtIso`` of a result the
        shim kept in its spool while the sidecar was down.
        """
        evaluation = self.evaluate(tool_name, tool_input, cwd)
        fields: dict[str, Any] = {
            "toolCallId": tool_call_id,
            "toolName": normalize_tool_name(tool_name),
            "isError": bool(is_error),
            "actionKind": evaluation.action_kind,
            "payloadHash": payload_hash(tool_input),
        }
        if evaluation.fingerprint is not None:
            fields.update(_fingerprint_fields(evaluation.fingerprint))
        if evidence_id is not None:
            fields["evidenceId"] = evidence_id
        # Why it ran: the rules that decided (a user rule that relaxed a built-in one
        # included) and what it was, redacted, so a call that ran without asking is legible.
        if evaluation.rule_ids:
            fields["ruleIds"] = list(evaluation.rule_ids[:16])
        if evaluation.preview and self._preview:
            fields["preview"] = evaluation.preview
        self._append("tool.executed", {**fields, **(late or {})})

    def blocked(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        reason: BlockReason,
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a call the guard stopped without asking (``confirmation.declined`` with a
        block ``reason``), whatever its kind: a local-safe call that could not run because
        the sidecar or the sandbox was not there is counted like a risky one."""
        check_tool_call_id(tool_call_id)
        evaluation = self.evaluate(tool_name, tool_input, cwd)
        fields: dict[str, Any] = {
            "reason": reason,
            "actionKind": evaluation.action_kind,
            "toolName": normalize_tool_name(tool_name),
            "payloadHash": payload_hash(tool_input),
        }
        fields.update(_fingerprint_fields(evaluation.fingerprint))
        if tool_call_id is not None:
            fields["toolCallId"] = tool_call_id
        if evaluation.rule_ids:
            fields["ruleIds"] = list(evaluation.rule_ids[:16])
        if evaluation.preview and self._preview:
            fields["preview"] = evaluation.preview
        self._append("confirmation.declined", {**fields, **(late or {})})

    # -- late delivery (the shim's spool) -----------------------------------

    def logged_spool_ids(self, since: datetime) -> set[str]:
        """``spoolId`` of every record appended at or after ``since`` (read backwards).

        A late event is appended after it happened, so records older than it cannot hold
        its id. A line that does not check is an integrity error: nothing is appended then.
        """
        found: set[str] = set()
        stream, size, _ = open_snapshot(self.audit.path, with_head=False)
        with stream:
            for _offset, line in lines_backward(stream.fileno(), size):
                if not line.endswith(b"\n"):
                    continue  # a torn final line
                try:
                    rec = check_line(line[:-1])
                except LogLineError as fault:
                    raise LogIntegrityError(self.audit.path, fault.kind, fault.detail) from None
                if parse_iso(rec["ts"], "ts") < since:
                    break
                data = rec["data"]
                spool_id = data.get("spoolId") if isinstance(data, dict) else None
                if isinstance(spool_id, str):
                    found.add(spool_id)
        return found

    def declined_late(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        reason: LateDeclineReason,
        late: Mapping[str, Any],
        tool_call_id: str | None = None,
        operator_reason: str | None = None,
    ) -> bool:
        """Append a ``confirmation.declined`` the shim could not deliver when it happened.

        ``late`` holds ``deliveredLate``, ``spoolId`` and ``occurredAtIso``. The call is
        classified now (the fingerprint is computed here, never taken from the shim); a
        call the policy now allows has no fingerprint and is not appended (returns False).
        """
        check_tool_call_id(tool_call_id)
        if reason in ("sidecar-unavailable", "sandbox-unavailable"):
            # Blocked whatever the policy says of it now: counted, local-safe or not.
            self.blocked(tool_name, tool_input, cwd, reason, tool_call_id=tool_call_id, late=late)
            return True
        evaluation = self.evaluate(tool_name, tool_input, cwd)
        fp = evaluation.fingerprint
        if fp is None:
            return False
        preview = {"preview": evaluation.preview} if evaluation.preview and self._preview else {}
        call = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        said = operator_reason_text(operator_reason)
        self._append(
            "confirmation.declined",
            {
                "reason": reason,
                **_fingerprint_fields(fp),
                **call,
                **preview,
                **({"operatorReason": said} if said else {}),
                **late,
            },
        )
        return True

    def input_changed(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        late: Mapping[str, Any] | None = None,
    ) -> None:
        """Audit a call refused at execution because its input is not the one judged.

        The fingerprint is the input that would have run, as a protected action (even
        when the policy would have let that input through: it was never the one decided).
        """
        check_tool_call_id(tool_call_id)
        name = normalize_tool_name(tool_name)
        verdict, _ = self.classifier.classify(name, check_input(tool_input), cwd)
        fp = compute_fingerprint("protected", name, tool_input, cwd, path=verdict.path)
        call = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        self._append(
            "confirmation.declined",
            {
                "reason": "input-changed-after-decision",
                **_fingerprint_fields(fp),
                **call,
                **(late or {}),
            },
        )

    # -- grants -----------------------------------------------------------

    def policy_digest(self, workspace: str | os.PathLike[str]) -> str:
        """The SHA-256 of the policy in force for ``workspace`` (``policy show``'s JSON)."""
        return sha256_prefixed(canonical_json(self.classifier.policy_for(workspace).describe()))

    def grant_limits(self, workspace: str | os.PathLike[str]) -> GrantLimits:
        """What the policy in force for ``workspace`` lets a new grant be (``[grants]``)."""
        settings = self.classifier.policy_for(workspace).grants
        return GrantLimits(settings.enabled, settings.max_minutes, settings.max_uses)

    def grant_offers(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
    ) -> tuple[GrantOffer, ...]:
        """The grants a dialog about this call may offer (none without a pi session, with
        grants switched off, or for a call :func:`guard._grants.offers` refuses)."""
        if self.session is None or not self.grant_limits(workspace).enabled:
            return ()
        name = normalize_tool_name(tool_name)
        verdict, _ = self.classifier.classify(name, check_input(tool_input), Path(cwd))
        return offers(name, tool_input, cwd, verdict, workspace=workspace)

    def create_grant(
        self,
        offer: GrantOffer,
        evidence_id: str,
        *,
        workspace: str | os.PathLike[str],
    ) -> GrantRecord:
        """Keep ``offer`` as a signed grant of this pi session (audited ``grant.created``);
        ``evidence_id`` is the evidence of the dialog's own call."""
        if self.session is None:
            raise BadInputError("no-session", "a grant needs a pi session")
        return self.grants.create(
            offer,
            session_id=self.session["id"],
            evidence_id=evidence_id,
            limits=self.grant_limits(workspace),
            policy_digest=self.policy_digest(workspace),
            now=utc_now(),
        )

    def covered(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        workspace: str | os.PathLike[str],
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
    ) -> RecordResult | None:
        """If a grant of this pi session covers the call: its own evidence (origin
        ``runtime-grant``, ``coveredBy`` the grant), audited with ``grant.used``; else
        ``None`` and the call gets the normal dialog."""
        if self.session is None:
            return None
        name = normalize_tool_name(tool_name)
        verdict, _ = self.classifier.classify(name, check_input(tool_input), Path(cwd))
        cover = self.grants.cover(
            name,
            tool_input,
            cwd,
            verdict,
            session_id=self.session["id"],
            policy_digest=self.policy_digest(workspace),
            now=utc_now(),
        )
        if cover is None:
            return None
        covered_by = CoveredBy(
            grant_id=cover.grant.grant_id,
            use=cover.use,
            grant_evidence_id=cover.grant.evidence_id,
        )
        result = self.record(
            tool_name,
            tool_input,
            cwd,
            confirmed=True,
            ttl_seconds=ttl_seconds,
            tool_call_id=tool_call_id,
            covered_by=covered_by,
        )
        if result.evidence_id is None:
            return None
        preview = _preview(name, tool_input, verdict)
        used: dict[str, Any] = {
            "grantId": cover.grant.grant_id,
            "use": cover.use,
            "evidenceId": result.evidence_id,
        }
        if tool_call_id is not None:
            used["toolCallId"] = tool_call_id
        if preview and self._preview:
            used["preview"] = preview
        self._append("grant.used", used)
        return result

    def end_grants(self, reason: Literal["session-ended"]) -> None:
        """End this pi session's grants (a grant never outlives its session)."""
        if self.session is not None:
            self.grants.end(reason, utc_now(), session_id=self.session["id"])

    # -- sessions ---------------------------------------------------------

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

    def _append(self, event: str, data: Mapping[str, Any]) -> AuditRecord:
        """Append ``event``, naming the session it belongs to where the event can (a record
        delivered late names the session the shim kept it in, or none)."""
        if (
            self.session is not None
            and "session" not in data
            and not data.get("deliveredLate")
            and "session" in EVENT_MODELS[event].model_fields
        ):
            data = {**data, "session": self.session}
        record = self.audit.append(event, data)
        if not data.get("deliveredLate"):  # a late record belongs to the session it names
            _count(self.session_counts, event, data)
        return record

    def session_started(
        self,
        scope: str,
        sandbox: Literal["sandboxed", "unsandboxed", "unavailable"],
        *,
        reason: str | None = None,
        message: str | None = None,
        pi_version: str | None = None,
        sidecar_restarted: bool = False,
        mode: str | None = None,
        network: str | None = None,
    ) -> None:
        """Audit ``session.started``: a sidecar took over a pi session, its sandbox state and
        the digest of the policy in force for it."""
        fields: dict[str, Any] = {
            "sandbox": sandbox,
            "scope": scope,
            "sidecarRestarted": sidecar_restarted,
            "policyDigest": sha256_prefixed(
                canonical_json(self.classifier.policy_for(scope).describe())
            ),
        }
        if mode in ("tui", "rpc", "json", "print"):
            fields["mode"] = mode
        if network is not None and sandbox == "sandboxed":
            fields["network"] = network
        if reason:
            fields["reason"] = reason
        if message and sandbox != "sandboxed":
            fields["message"] = shorten(message, 1024)
        if pi_version:
            fields["piVersion"] = shorten(pi_version, 64)
        self._append("session.started", fields)

    def session_ended(self, reason: Literal["shutdown", "switched"]) -> None:
        """End the session's grants, then audit ``session.ended`` with what happened in it
        (:attr:`session_counts`)."""
        self.end_grants("session-ended")
        self._append("session.ended", {"reason": reason, **self.session_counts})

    def approval_refused(self, reason: str, approver: Approver, approval_id: str | None) -> None:
        """Audit ``approval.refused``: a screen's answer lost or was not the operator's."""
        data: dict[str, Any] = {"reason": reason, "approver": approver}
        if approval_id:
            data["approvalId"] = shorten(approval_id, 64)
        self._append("approval.refused", data)

    def network_refused(self, host: str, port: int, reason: str, scope: str) -> None:
        """Audit ``network.refused``: the allowlist proxy refused an agent command's request."""
        self._append(
            "network.refused",
            {"host": shorten(host, 253) or "?", "port": port, "reason": reason, "scope": scope},
        )

    # -- effects review -----------------------------------------------------

    def effects_reviewed(
        self, review: Review, layer: str, scope: str, *, tool_call_id: str | None = None
    ) -> None:
        """Audit ``effects.reviewed``: what a command did and what of it is held."""
        counts: dict[str, int] = {}
        for effect in review.effects:
            counts[effect.kind] = counts.get(effect.kind, 0) + 1
        held = [
            {"path": h.effect.path, "kind": h.effect.kind, "reason": h.reason,
             "files": h.files, "bytes": h.bytes}
            for h in review.held[:64]
        ]  # fmt: skip
        data: dict[str, Any] = {
            "layer": layer,
            "scope": scope,
            "decision": review.decision if review.decision != "partial" else "held",
            "counts": counts,
            "held": held,
            "heldTotal": len(review.held),
        }
        if review.digest is not None:
            data["digest"] = review.digest
        if tool_call_id is not None:
            data["toolCallId"] = tool_call_id
        self._append("effects.reviewed", data)

    def record_effects(
        self,
        held: Review,
        layer: str,
        scope: str,
        command: str,
        *,
        confirmed: bool,
        tool_call_id: str | None = None,
        reason: str | None = None,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        approver: Approver | None = None,
    ) -> RecordResult:
        """The operator's answer about held effects; a yes mints an effects confirmation.

        The evidence (origin ``runtime-effects-confirm``, kind ``destructive``) is bound to
        the command and the digest of the held effect list: its payload hash is over
        ``{"command", "layer", "effects"}`` (RFC 8785), the layer's ``effects.reviewed``
        record holding the list. Audited as ``effects.resolved``.
        """
        assert held.digest is not None
        fp = Fingerprint(
            action_kind="destructive",
            tool_name="bash",
            path=None,
            scope=scope,
            payload_hash=payload_hash({"command": command, "layer": layer, "effects": held.digest}),
        )
        call = {"toolCallId": tool_call_id} if tool_call_id is not None else {}
        base = {"layer": layer, "digest": held.digest, **call}
        if approver is not None:
            base["approver"] = approver
        if not confirmed:
            self._append(
                "effects.resolved",
                {**base, "decision": "discarded", "reason": reason or "declined"},
            )
            return RecordResult(
                decision="declined",
                reasons=(reason or "declined",),
                fingerprint=fp,
                summary="held effects discarded; no evidence minted",
            )
        envelope = mint_envelope(
            self._current_signer(),
            fp,
            origin="runtime-effects-confirm",
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
            approver=approver,
        )
        d = envelope.details
        self._append(
            "effects.resolved", {**base, "decision": "applied", "evidenceId": d.evidence_id}
        )
        return RecordResult(
            decision="recorded",
            reasons=(),
            evidence_id=d.evidence_id,
            expires_at_iso=d.expires_at_iso,
            envelope=envelope,
            fingerprint=fp,
            summary=f"effects confirmed: {d.evidence_id}; report-only",
        )

    # -- planner ----------------------------------------------------------

    def plan(self, planner: str, params: Mapping[str, Any] | str | bytes) -> PlanResult:
        """Run a read-only planner and audit ``planner.reported``. Raises ``PlanInputError``.

        ``params`` is a mapping or JSON text, decoded strictly (:func:`audit.load_json`).
        """
        inp = plan_input(planner, params)
        result = PLANNERS[planner].run(inp)
        self._append(
            "planner.reported",
            {"planner": planner, "decision": result.decision, "reasons": list(result.reasons)},
        )
        return result

    # -- audit ------------------------------------------------------------

    def verify_audit(self, *, allow_unanchored: bool = False) -> VerifyResult:
        return verify_log(
            self.audit.path, self.public_keyring().public_keys(), allow_unanchored=allow_unanchored
        )

    def status(self) -> dict[str, Any]:
        return {
            "home": str(self.home),
            "keyId": self.key_id,
            "auditLog": str(self.audit.path),
            "consumedIds": self.ledger.count(),
            "skewSeconds": int(DEFAULT_SKEW.total_seconds()),
            "maxTtlSeconds": MAX_TTL_SECONDS,
        }

    def close(self) -> None:
        self.ledger.close()
        self.audit.close()

    def __enter__(self) -> Guard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
