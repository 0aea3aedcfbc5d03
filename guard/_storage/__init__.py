"""Where the guard keeps what is not the audit log itself: one module per storage backend.

* ``ledger``: the :class:`ConsumptionLedger` protocol (and :class:`SyncedLedger`, a ledger
  kept in step with an audit log) with :class:`SqliteLedger`, the default: the home's
  ``ledger.sqlite3``;
* ``pg_ledger``: :class:`~guard._storage.pg_ledger.PgLedger`, the same protocol on PostgreSQL,
  shared by many hosts;
* ``pg_store``: the central append-only audit store (``audit ship``, ``audit verify --from``);
* ``postgres``: the ``pi_guard`` schema and connections; ``pg_url``: URLs, shown without
  their password.

The PostgreSQL modules import ``psycopg``, the ``postgres`` extra
(``pi-operator-guard[postgres]``). Import them only where a PostgreSQL URL is configured, after
:func:`psycopg_missing` said it is installed; the backend is chosen above this wing
(``guard/_ledger_choice.py``, which reads the policy).
"""

from __future__ import annotations

from guard._storage.ledger import (
    ConsumptionLedger,
    InsertOutcome,
    LogPosition,
    SqliteLedger,
    SyncedLedger,
)
from guard._storage.pg_url import is_postgres_url, redact_url

__all__ = [
    "SHIP_BATCH",
    "ConsumptionLedger",
    "InsertOutcome",
    "LogPosition",
    "SqliteLedger",
    "SyncedLedger",
    "is_postgres_url",
    "psycopg_missing",
    "redact_url",
]


SHIP_BATCH = 500
"""Records per transaction of ``audit ship`` unless ``--batch`` says otherwise."""


def psycopg_missing() -> str | None:
    """``None`` when PostgreSQL can be used; otherwise the one line that says how to get it."""
    try:
        import psycopg  # noqa: F401  (the PostgreSQL modules need it a moment later anyway)
    except ImportError:
        pass
    else:
        return None
    return (
        "a PostgreSQL URL is configured, but psycopg is not installed: "
        "pip install 'pi-operator-guard[postgres]'"
    )
