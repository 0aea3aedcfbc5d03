"""Subcommands beyond the evidence core: plan, audit, serve, install, policy."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from guard._cli.io import emit, read_text_arg
from guard._evidence.keys import KEYRING_FILE, PublicKeyring
from guard._home import resolve_home

__all__ = ["register_all"]

if TYPE_CHECKING:
    from audit import VerifyResult

    Sub = argparse._SubParsersAction[argparse.ArgumentParser]

EXIT_OK = 0
EXIT_TAMPERED = 4
EXIT_GAPS = 5


def _log_path(args: argparse.Namespace) -> Path:
    if args.log is not None:
        return Path(args.log)
    from guard._guard import AUDIT_LOG_FILE

    return resolve_home(args.home) / AUDIT_LOG_FILE


def cmd_plan(args: argparse.Namespace) -> int:
    """Print a plan; audit ``planner.reported`` only when the home's audit log exists.

    Planning is read-only: it never creates a home, a key or a log as a side effect.
    """
    from guard._guard import AUDIT_LOG_FILE, Guard
    from planning import PLANNERS, parse_plan_input

    raw = read_text_arg(args.input, "--input") if args.input is not None else "{}"
    home = resolve_home(args.home)
    if (home / AUDIT_LOG_FILE).exists():
        with Guard.open(home) as guard:
            emit(guard.plan(args.planner, raw))
    else:
        emit(PLANNERS[args.planner].run(parse_plan_input(args.planner, raw)))
    return EXIT_OK


def cmd_audit_verify(args: argparse.Namespace) -> int:
    from audit import tty_progress, verify_log

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
    return result.exit_code


def _render_verify(result: VerifyResult) -> str:
    if result.decision == "intact":
        return (
            f"intact: {result.records} records, seq 0..{result.last_seq}, "
            f"head signed by {result.head_key_id}"
        )
    where = f"line {result.line}" if result.line is not None else "head"
    fault = result.fault or result.decision
    return f"{result.decision}: {fault} at {where}: {result.detail}"


def cmd_audit_show(args: argparse.Namespace) -> int:
    from audit import filter_records, read_records, render_records

    records = filter_records(
        read_records(_log_path(args)),
        event=args.event,
        tool=args.tool,
        since=args.since,
        until=args.until,
        evidence_id=args.evidence,
    )
    if args.json:
        for record in records:
            sys.stdout.write(json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_records(records))
    return EXIT_OK


def cmd_audit_report(args: argparse.Namespace) -> int:
    from audit import build_report, read_records, render_report

    report = build_report(read_records(_log_path(args)))
    if args.json:
        emit(report)
    else:
        sys.stdout.write(render_report(report) + "\n")
    return EXIT_OK if report.decision == "no-gaps" else EXIT_GAPS


def _audit(sub: Sub) -> None:
    audit = sub.add_parser("audit", help="verify, show and report on the audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True, parser_class=type(audit))
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
    show.add_argument("--json", action="store_true", help="JSON lines instead of a table")
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


def _plan(sub: Sub) -> None:
    from planning import PLANNERS

    plan = sub.add_parser("plan", help="read-only planners; report-only, authorize nothing")
    plan.add_argument("planner", choices=sorted(PLANNERS))
    plan.add_argument("--input", default=None, help="planner input as JSON, or - for stdin")
    plan.set_defaults(func=cmd_plan)


def register_all() -> list[Callable[[Sub], None]]:
    from guard._cli.pi import add_serve_parsers
    from guard._cli.policy import add_policy_parser

    return [_plan, _audit, add_serve_parsers, add_policy_parser]
