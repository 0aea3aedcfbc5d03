"""``audit ship --to URL`` and ``audit verify --from URL --source LOGID``: the central store.

The store is PostgreSQL (guard/_storage/pg_store.py). ``verify --from`` writes the source's
records and newest head into a private temporary directory and runs the same
:func:`audit.verify_log` as ``audit verify`` on a file, with the same output and exit
codes; it also checks that the records are the named source's log.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import audit.verify
from guard._cli.args import Parser, existing_home, int_arg
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import AuditStoreError, AuditStoreMismatch, BadInputError
from guard._home import AUDIT_LOG_FILE
from guard._storage import SHIP_BATCH, is_postgres_url, psycopg_missing, redact_url

if TYPE_CHECKING:
    from audit.verify import VerifyResult

__all__ = ["cmd_audit_verify_from", "register_ship"]


def _url(value: str, flag: str) -> str:
    if not is_postgres_url(value):
        raise BadInputError(flag, "must be a postgresql:// URL")
    missing = psycopg_missing()
    if missing is not None:
        raise AuditStoreError(redact_url(value), missing)
    return value


def cmd_audit_ship(args: argparse.Namespace) -> ExitCode:
    url = _url(args.to, "--to")
    from guard._storage import ship_log  # psycopg only when it is used (said first)

    log = Path(args.log) if args.log is not None else existing_home(args.home) / AUDIT_LOG_FILE

    result = ship_log(log, url, batch=args.batch)
    if args.json:
        emit(result)
    else:
        head = f", head {result.head_sha256[:16]}…" if result.head_sha256 else ", no head file"
        sys.stdout.write(
            f"shipped: source {result.source}: {result.records} records in the store "
            f"({result.shipped} new){head} to {result.store}\n"
        )
    return ExitCode.OK


Checkpoint = Callable[
    [argparse.Namespace, Path, Mapping[str, Ed25519PublicKey]], tuple[bytes | None, Any]
]


def cmd_audit_verify_from(
    args: argparse.Namespace,
    keys: Mapping[str, Ed25519PublicKey],
    render: Callable[[VerifyResult], str],
    checkpoint: Checkpoint,
) -> ExitCode:
    """``audit verify --from URL --source LOGID``: as from the file (``render``: its text;
    ``checkpoint``: ``--against`` or the latest anchored checkpoint, as for the file; the
    whole log is always read)."""
    if args.log is not None:
        raise BadInputError("log", "give either a log file or --from, not both", args.log)
    if not args.source:
        raise BadInputError("--source", "is required with --from (the log id to verify)")
    url = _url(args.from_, "--from")
    from guard._storage import load_source  # psycopg only when it is used

    with tempfile.TemporaryDirectory(prefix="pi-guard-verify-") as scratch:
        loaded = load_source(url, args.source, Path(scratch), AUDIT_LOG_FILE)
        log = Path(scratch) / AUDIT_LOG_FILE
        against, _ = checkpoint(args, log, keys)
        progress = None if args.json else audit.verify.tty_progress(sys.stderr)
        result = audit.verify.verify_log(
            log,
            keys,
            allow_unanchored=args.allow_unanchored,
            progress=progress,
            against=against,
            workers=os.cpu_count() or 1,
        )
    if result.log_id is not None and result.log_id != args.source:
        raise AuditStoreMismatch(
            args.source, 0, f"the stored records are the log {result.log_id}, not this source"
        )
    if loaded.beyond_head:
        sys.stderr.write(
            f"pi-guard: note: {loaded.beyond_head} stored records after the newest shipped "
            "head are not covered by it and were not verified (ship again)\n"
        )
    if args.json:
        emit(result)
    else:
        sys.stdout.write(render(result) + "\n")
    return ExitCode(result.exit_code)


def register_ship(audit_sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``audit ship`` (``verify --from`` is an option of ``audit verify``)."""
    ship = audit_sub.add_parser(
        "ship", help="copy the log's records and head to a central PostgreSQL audit store"
    )
    ship.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    ship.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="postgresql://… (a password is better kept in ~/.pgpass or $PGPASSWORD)",
    )
    ship.add_argument(
        "--batch",
        type=int_arg("--batch", 1, 100_000),
        default=SHIP_BATCH,
        metavar="N",
        help=f"records per transaction (default {SHIP_BATCH})",
    )
    ship.add_argument("--json", action="store_true")
    ship.set_defaults(func=cmd_audit_ship)
