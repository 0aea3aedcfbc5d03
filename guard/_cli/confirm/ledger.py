"""``pi-guard ledger init|status``: the shared PostgreSQL consumption ledger.

* ``init [URL]`` creates the ``pi_guard`` schema (ledger and audit store) with the rights of
  the URL's role, the owner's, once per database (docs/deployment-postgresql.md);
* ``status`` says which ledger the home uses (SQLite file, or the PostgreSQL URL without its
  password) and, for PostgreSQL, that it can be reached and how many ids it holds.

``URL`` defaults to ``$PI_OPERATOR_GUARD_LEDGER`` or the user policy's ``[ledger] url``.
"""

from __future__ import annotations

import argparse
import sys

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._cli.args import Parser, Subparsers, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import BadInputError, LedgerError
from guard._home import LEDGER_FILE, resolve_home
from guard._storage import is_postgres_url, psycopg_missing, redact_url

__all__ = ["register"]


class LedgerStatus(BaseModel):
    """``ledger status --json`` and ``ledger init --json``."""

    model_config = WIRE_CONFIG

    backend: str  # "sqlite" or "postgresql"
    location: str  # the file, or the URL without its password
    consumed_ids: int


def _url(args: argparse.Namespace) -> str:
    from guard._facade import ledger_url  # the policy: not for --help

    url = args.url or ledger_url(resolve_home(args.home))
    if url is None:
        raise BadInputError(
            "url", "no PostgreSQL ledger named (give URL, $PI_OPERATOR_GUARD_LEDGER or [ledger])"
        )
    if not is_postgres_url(url):
        raise BadInputError("url", "must be a postgresql:// URL")
    return url


def _show(args: argparse.Namespace, status: LedgerStatus, verb: str) -> None:
    if args.json:
        emit(status)
    else:
        sys.stdout.write(
            f"{verb}: {status.backend} ledger at {status.location}, "
            f"{status.consumed_ids} consumed ids held\n"
        )


def cmd_ledger_init(args: argparse.Namespace) -> ExitCode:
    url = _url(args)
    missing = psycopg_missing()
    if missing is not None:
        raise LedgerError(redact_url(url), missing)
    from guard._storage import PgLedger  # psycopg only when it is used

    ledger = PgLedger.open(url, source="init")  # creates the schema when it is missing
    try:
        status = LedgerStatus(
            backend="postgresql", location=redact_url(url), consumed_ids=ledger.count()
        )
    finally:
        ledger.close()
    _show(args, status, "ready")
    return ExitCode.OK


def cmd_ledger_status(args: argparse.Namespace) -> ExitCode:
    from guard._facade import ledger_url, open_ledger

    url = ledger_url(resolve_home(args.home))
    home = existing_home(args.home) if url is None else resolve_home(args.home)
    if url is None and not (home / LEDGER_FILE).exists():
        raise LedgerError(home / LEDGER_FILE, "no ledger yet (the guard creates it on first use)")
    ledger = open_ledger(home)
    try:
        status = LedgerStatus(
            backend="sqlite" if url is None else "postgresql",
            location=str(home / LEDGER_FILE) if url is None else redact_url(url),
            consumed_ids=ledger.count(),
        )
    finally:
        ledger.close()
    _show(args, status, "ok")
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``ledger`` and its subcommands."""
    group = sub.add_parser("ledger", help="the consumption ledger (SQLite or shared PostgreSQL)")
    ledger_sub = group.add_subparsers(dest="ledger_command", required=True, parser_class=Parser)
    init = ledger_sub.add_parser(
        "init", help="create the pi_guard schema in a PostgreSQL database (as its owner)"
    )
    init.add_argument(
        "url", nargs="?", default=None, metavar="URL", help="postgresql://… (default: the home's)"
    )
    init.add_argument("--json", action="store_true")
    init.set_defaults(func=cmd_ledger_init)
    status = ledger_sub.add_parser("status", help="which ledger the home uses; is it reachable")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_ledger_status)
