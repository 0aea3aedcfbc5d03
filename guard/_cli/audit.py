"""``audit verify``, ``audit show`` and ``audit report``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audit import (
    VerifyResult,
    build_report,
    filter_records,
    read_records,
    render_records,
    render_records_jsonl,
    render_report,
    tty_progress,
    verify_log,
)
from guard._cli.args import Parser, Subparsers
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._evidence.keys import KEYRING_FILE, PublicKeyring
from guard._guard import AUDIT_LOG_FILE
from guard._home import resolve_home

__all__ = ["register"]


def _log_path(args: argparse.Namespace) -> Path:
    if args.log is not None:
        return Path(args.log)
    return resolve_home(args.home) / AUDIT_LOG_FILE


def cmd_audit_verify(args: argparse.Namespace) -> ExitCode:
    log = _log_path(args)
    keyring_path = Path(args.keyring) if args.keyring else resolve_home(args.home) / KEYRING_FILE
    keyring = PublicKeyring.load(keyring_path)
    progress = None if args.json else tty_progress(sys.stderr)
    result = verify_log(
        log, keyring.public_keys(), allow_unanchored=args.allow_unanchored, progress=progress
    )
    if args.json:
        emit(result)
    else:
        sys.stdout.write(_render_verify(result) + "\n")
    return ExitCode(result.exit_code)


def _render_verify(result: VerifyResult) -> str:
    if result.decision == "intact":
        return (
            f"intact: {result.records} records, seq 0..{result.last_seq}, "
            f"head signed by {result.head_key_id}"
        )
    where = f"line {result.line}" if result.line is not None else "head"
    fault = result.fault or result.decision
    return f"{result.decision}: {fault} at {where}: {result.detail}"


def cmd_audit_show(args: argparse.Namespace) -> ExitCode:
    records = filter_records(
        read_records(_log_path(args)),
        event=args.event,
        tool=args.tool,
        since=args.since,
        until=args.until,
        evidence_id=args.evidence,
    )
    # --json prints each record's line exactly as it stands in the log (canonical bytes).
    sys.stdout.write(render_records_jsonl(records) if args.json else render_records(records))
    return ExitCode.OK


def cmd_audit_report(args: argparse.Namespace) -> ExitCode:
    report = build_report(read_records(_log_path(args)))
    if args.json:
        emit(report)
    else:
        sys.stdout.write(render_report(report) + "\n")
    return ExitCode.OK if report.decision == "no-gaps" else ExitCode.GAPS


def register(sub: Subparsers) -> None:
    """Add ``audit`` and its subcommands."""
    audit = sub.add_parser("audit", help="verify, show and report on the audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True, parser_class=Parser)
    verify = audit_sub.add_parser("verify", help="check the hash chain and the signed head")
    verify.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    verify.add_argument("--keyring", default=None, help="public keyring file (default: the home's)")
    verify.add_argument(
        "--allow-unanchored",
        action="store_true",
        help="accept a log without a head file (exit 0 instead of 4)",
    )
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(func=cmd_audit_verify)
    show = audit_sub.add_parser("show", help="list records, filtered")
    show.add_argument("log", nargs="?", default=None)
    show.add_argument(
        "--json", action="store_true", help="the records' lines exactly as in the log"
    )
    show.add_argument("--event", default=None)
    show.add_argument("--tool", default=None)
    show.add_argument("--since", default=None, help="UTC ISO timestamp")
    show.add_argument("--until", default=None, help="UTC ISO timestamp")
    show.add_argument("--evidence", default=None, help="evidence id")
    show.set_defaults(func=cmd_audit_show)
    report = audit_sub.add_parser("report", help="auditable vs audit-gap per executed call")
    report.add_argument("log", nargs="?", default=None)
    report.add_argument("--json", action="store_true")
    report.set_defaults(func=cmd_audit_report)
