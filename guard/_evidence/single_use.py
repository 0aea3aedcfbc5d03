"""The one consume path of the guard and of a verify-only monitor.

Both bring the ledger up to date from the home's audit log, look for this very id among the
log's recent ``evidence.consumed`` records, and only then run the seven checks
(:func:`guard._evidence.consume.check_and_consume`). They share this function so that what
one of them knows about a consumed id the other cannot miss: the monitor once skipped the
recall, and would then have accepted a replay of an id a prune had dropped from the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from guard._evidence.consume import check_and_consume
from guard._evidence.envelope import ParsedEnvelope
from guard._evidence.fingerprint import Fingerprint
from guard._evidence.keys import PublicKeyring
from guard._evidence.models import ConsumeResult
from guard._evidence.recall import recall_consumed
from guard._evidence.resync import sync_ledger
from guard._storage import SyncedLedger

__all__ = ["consume_synced"]


def consume_synced(
    raw: Mapping[str, Any] | str | bytes | None,
    pending: Fingerprint | None,
    *,
    keyring: PublicKeyring,
    ledger: SyncedLedger,
    log_path: Path,
    now: datetime,
    tool_call_id: str | None = None,
    call_checked_elsewhere: bool = False,
    require_log: bool = True,
    require_dialog: bool = False,
    require_operator_signature: bool = False,
) -> ConsumeResult:
    """Sync ``ledger`` from the audit log at ``log_path``, recall this id from it, check and
    consume ``raw`` once. Never authorizes anything.

    ``require_log=False``: a home without an audit log (a monitor's) has nothing to sync or
    recall; otherwise a log that cannot be read or verified raises :class:`LedgerError` and
    nothing is consumed. ``require_dialog``: grant-covered evidence is rejected (``not-dialog``)
    and not consumed, see :func:`check_and_consume`; so is evidence without the operator's own
    signature under ``require_operator_signature`` (``not-operator-signed``).
    """
    sync_ledger(ledger, log_path, keyring.public_keys(), require_log=require_log)
    parsed = None if raw is None or raw in ("", b"", {}) else ParsedEnvelope.of(raw)
    # Even a ledger edited in place (rows gone, position forged) cannot forget: the log's
    # recent evidence.consumed records are checked for this very id.
    recall_consumed(ledger, log_path, raw, require_log=require_log, parsed=parsed)
    return check_and_consume(
        raw,
        pending,
        keyring=keyring,
        ledger=ledger,
        now=now,
        tool_call_id=tool_call_id,
        call_checked_elsewhere=call_checked_elsewhere,
        require_dialog=require_dialog,
        require_operator_signature=require_operator_signature,
        parsed=parsed,
    )
