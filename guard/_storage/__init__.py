"""Where the guard keeps what is not the audit log itself: one module per storage backend.

* ``ledger``: the :class:`ConsumptionLedger` protocol (and :class:`SyncedLedger`, a ledger
  kept in step with an audit log) with :class:`SqliteLedger`, the default: the home's
  ``ledger.sqlite3``;
* ``pg_ledger``: :class:`~guard._storage.pg_ledger.PgLedger`, the same protocol on PostgreSQL,
  shared by many hosts;
* ``pg_store``: the central append-only audit store (``audit ship``, ``audit verify --from``);
* ``postgres``: the ``pi_guard`` schema and connections; ``pg_url``: URLs, shown without
  their password, and whether psycopg is installed.

The PostgreSQL modules import ``psycopg``, the ``postgres`` extra
(``pi-operator-guard[postgres]``). Import them only where a PostgreSQL URL is configured, after
:func:`psycopg_missing` said it is installed; the backend is chosen above this wing
(``guard/_facade/ledger.py``, which reads the policy). The face is lazy: a name's module is
imported when the name is first used, so naming :class:`PgLedger` costs nothing until then.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._storage.ledger import (
        ConsumptionLedger,
        InsertOutcome,
        LogPosition,
        SqliteLedger,
        SyncedLedger,
    )
    from guard._storage.pg_ledger import (
        PgLedger,
    )
    from guard._storage.pg_store import (
        load_source,
        ship_log,
    )
    from guard._storage.pg_url import (
        SHIP_BATCH,
        is_postgres_url,
        psycopg_missing,
        redact_url,
    )

__all__ = [
    "SHIP_BATCH",
    "ConsumptionLedger",
    "InsertOutcome",
    "LogPosition",
    "PgLedger",
    "SqliteLedger",
    "SyncedLedger",
    "is_postgres_url",
    "load_source",
    "psycopg_missing",
    "redact_url",
    "ship_log",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "ConsumptionLedger": "guard._storage.ledger",
    "InsertOutcome": "guard._storage.ledger",
    "LogPosition": "guard._storage.ledger",
    "SqliteLedger": "guard._storage.ledger",
    "SyncedLedger": "guard._storage.ledger",
    "PgLedger": "guard._storage.pg_ledger",
    "load_source": "guard._storage.pg_store",
    "ship_log": "guard._storage.pg_store",
    "SHIP_BATCH": "guard._storage.pg_url",
    "is_postgres_url": "guard._storage.pg_url",
    "psycopg_missing": "guard._storage.pg_url",
    "redact_url": "guard._storage.pg_url",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
