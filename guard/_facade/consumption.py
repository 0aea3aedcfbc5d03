"""Evidence consumed on the facade: the one consume path (:func:`consume_call`, the same a
verify-only :class:`guard.Monitor` takes), then its result audited.

Contract: the pending call's fingerprint is recomputed here from the call itself, never taken
from the caller; the ledger is synced from the audit log first; the result is appended as
``evidence.consumed`` or ``evidence.rejected``, with the fingerprint it was checked against.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from audit.wire import EvidenceConsumedData, EvidenceRejectedData
from guard._evidence import ConsumeResult, normalize_tool_name
from guard._facade.consumer import consume_call
from guard._facade.core import Core
from guard._facade.fields import fingerprint_fields

__all__ = ["Consumption"]


class Consumption:
    """``consume``: evidence checked against the pending call, consumed once, audited."""

    def __init__(self, core: Core) -> None:
        self._core = core

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
        core = self._core
        result, pending = consume_call(
            envelope,
            tool_name,
            tool_input,
            cwd,
            classifier=core.classifier,
            keyring=core.public_keyring(),
            ledger=core.ledger,
            log_path=core.audit.path,
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
            core.append(EvidenceConsumedData(**fields))
        else:
            core.append(
                EvidenceRejectedData(
                    decision=result.match.decision, reasons=list(result.reasons), **fields
                )
            )
        return result
