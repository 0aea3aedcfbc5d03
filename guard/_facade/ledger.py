"""Which consumption ledger a guard home uses: SQLite in the home, or a shared PostgreSQL.

``$PI_OPERATOR_GUARD_LEDGER=postgresql://…`` wins; else ``[ledger] url`` of the user's
policy file (``<home>/operator-guard.toml``; a project file's ``[ledger]`` is refused);
else the home's SQLite file. Fail closed: a ``[ledger]`` table that is invalid, or a
user file that cannot be read as TOML but mentions a ledger, is a :class:`LedgerError`
rather than a silent fall back to a per-machine ledger (which would let the same
evidence be consumed once per machine).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TYPE_CHECKING

from guard._errors import LedgerError
from guard._home import ENV_PREFIX, LEDGER_ENV, LEDGER_FILE, env
from guard._policy import CONFIG_FILE_NAME, read_layer
from guard._storage import SqliteLedger, is_postgres_url, psycopg_missing, redact_url

if TYPE_CHECKING:
    from guard._storage import PgLedger

__all__ = ["LEDGER_FILE", "ledger_source", "ledger_url", "open_ledger"]


def ledger_url(home: Path) -> str | None:
    """The PostgreSQL URL the home's ledger lives at; ``None``: the SQLite file."""
    value = (env(LEDGER_ENV) or "").strip()
    if value:
        if not is_postgres_url(value):
            raise LedgerError(
                f"${ENV_PREFIX}LEDGER",
                f"must be a postgresql:// URL (got {redact_url(value)[:80]!r}); "
                "consumption refused",
            )
        return value
    config = home / CONFIG_FILE_NAME
    layer = read_layer(config, "user")
    if layer.ledger is not None:
        return layer.ledger.url
    bad = [p for p in layer.problems if p.key.startswith("ledger")]
    if bad:
        raise LedgerError(config, f"[ledger] is invalid ({bad[0].message}); consumption refused")
    if layer.status == "invalid" and _mentions_ledger(config):
        raise LedgerError(
            config,
            "the user policy file is not valid TOML and names a [ledger]: which ledger to use "
            "is unknown; consumption refused",
        )
    return None


def _mentions_ledger(path: Path) -> bool:
    try:
        return b"ledger" in path.read_bytes()[: 1 << 20]
    except OSError:
        return True


def ledger_source(home: Path) -> str:
    """This home's name among the many audit logs that feed a shared ledger."""
    return f"{socket.gethostname()}:{home}"


def open_ledger(
    home: Path, *, set_aside_corrupt: bool = False, lazy: bool = False
) -> SqliteLedger | PgLedger:
    """Open the home's ledger (see the module docstring for which one).

    ``lazy``: a PostgreSQL ledger connects on first use (see :meth:`PgLedger.open`).
    """
    url = ledger_url(home)
    if url is None:
        return SqliteLedger.open(home / LEDGER_FILE, set_aside_corrupt=set_aside_corrupt)
    missing = psycopg_missing()
    if missing is not None:
        raise LedgerError(redact_url(url), missing)
    from guard._storage import PgLedger  # psycopg only when it is used

    return PgLedger.open(url, source=ledger_source(home), lazy=lazy)
