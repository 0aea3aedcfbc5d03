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
from types import TracebackType
from typing import TYPE_CHECKING, Any

from audit.log import AuditLog
from audit.verify import VerifyResult, verify_log
from audit.wire import (
    EvidenceConsumedData,
    EvidenceRejectedData,
    KeyGeneratedData,
    KeyRetiredData,
    PlannerReportedData,
    utc_now,
)
from guard._errors import LedgerError
from guard._evidence import (
    DEFAULT_SKEW,
    MAX_TTL_SECONDS,
    ConsumeResult,
    KeyStore,
    anchor_dir,
    normalize_tool_name,
)
from guard._facade import (
    BlockReason,
    DeclineReason,
    EffectsPart,
    LateDeclineReason,
    OperatorsPart,
    SessionsPart,
    SpoolPart,
    fingerprint_fields,
    operator_reason_text,
)
from guard._facade.consumer import consume_call
from guard._facade.ledger import LEDGER_FILE, open_ledger
from guard._home import AUDIT_LOG_FILE, AUDIT_PREVIEWS_ENV, ensure_private_dir, env, resolve_home
from guard._logging import get_logger
from guard._policy import remember_home
from guard._storage import SqliteLedger

if TYPE_CHECKING:
    from planning import PlanResult

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


class Guard(SpoolPart, SessionsPart, OperatorsPart, EffectsPart):
    """Keys, ledger and audit log of one guard home. Use :meth:`open`; close when done.

    Each concern is a part of :mod:`guard._facade` (keys, evaluate and record in its base;
    operators, grants, sessions, effects, what became of a call, the shim's spool); this
    class opens a home, consumes, runs planners and verifies the log.
    """

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
            setting = (env(AUDIT_PREVIEWS_ENV) or "on").strip().lower()
            preview = setting not in ("0", "off", "false", "no")
        root = ensure_private_dir(resolve_home(home))
        remember_home(root)  # every session's sandbox hides every home (_known_homes.py)
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
            audit.append(KeyGeneratedData(key_id=signer.key_id))
            for entry in keyring.keys:
                if entry.key_id in retired:
                    audit.append(
                        KeyRetiredData(
                            key_id=entry.key_id,
                            new_key_id=signer.key_id,
                            retired_at_iso=entry.retired_at_iso,
                            reason="key-file-missing",
                        )
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

    # -- consume ----------------------------------------------------------

    def consume(
        self,
        envelope: Mapping[str, Any] | str | bytes | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        call_checked_elsewhere: bool = False,
        require_dialog: bool = False,
        require_operator_signature: bool = False,
    ) -> ConsumeResult:
        """Check ``envelope`` against the pending call (recomputed here) and consume it once.

        ``tool_call_id``: the pending call's id; evidence bound to another call is rejected
        (``tool-call-id-mismatch``), and evidence bound to a call is rejected without it
        (``call-id-required``) unless ``call_checked_elsewhere=True`` says the consumer ties
        the evidence to the call itself. ``require_dialog``: evidence
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
            call_checked_elsewhere=call_checked_elsewhere,
            require_dialog=require_dialog,
            require_operator_signature=require_operator_signature,
        )
        fields = {
            "tool_name": normalize_tool_name(tool_name),
            "tool_call_id": tool_call_id,
            "evidence_id": result.evidence_id or None,
            **fingerprint_fields(pending),
        }
        if result.decision == "consumed":
            self._append(EvidenceConsumedData(**fields))
        else:
            self._append(
                EvidenceRejectedData(
                    decision=result.match.decision, reasons=list(result.reasons), **fields
                )
            )
        return result

    # -- planner ----------------------------------------------------------

    def plan(self, planner: str, params: Mapping[str, Any] | str | bytes) -> PlanResult:
        """Run a read-only planner and audit ``planner.reported``. Raises ``PlanInputError``.

        ``params`` is a mapping or JSON text, decoded strictly (:func:`audit.load_json`).
        """
        # The planners (their models built at import) load with the first plan, not per guard.
        from guard._facade.plan import plan_input
        from planning import PLANNERS

        inp = plan_input(planner, params)
        result = PLANNERS[planner].run(inp)
        self._append(
            PlannerReportedData(
                planner=planner, decision=result.decision, reasons=list(result.reasons)
            )
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
