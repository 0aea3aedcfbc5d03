"""``audit verify``, ``show``, ``report`` and ``recover``; ``ship`` and ``verify --from``
are in :mod:`guard._cli.log.ship`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import audit.log
import audit.verify
from guard._cli.args import Parser, Subparsers, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._cli.log.ship import cmd_audit_verify_from, register_ship
from guard._cli.log.tlog import (
    keyring_of,
    latest_anchor,
    log_path_of,
    register_audit,
    render_verify,
)
from guard._errors import BadInputError
from guard._home import AUDIT_LOG_FILE, pi_agent_dir, resolve_home

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

__all__ = ["register"]


_log_path = log_path_of
_keyring = keyring_of
_render_verify = render_verify


def _checkpoint(
    args: argparse.Namespace, log: Path, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[bytes | None, Any]:
    """The checkpoint to verify against (``--against``, else the latest anchored one for
    ``log``) and the anchored tree state to resume from (``None``: read everything)."""
    if args.against is not None:
        try:
            with Path(args.against).open("rb") as handle:
                return handle.read(64 * 1024 + 1), None
        except OSError as exc:
            raise BadInputError(
                "--against", f"cannot read file: {exc.strerror}", args.against
            ) from None
    from guard._evidence import anchor_dir

    anchored = latest_anchor(anchor_dir(args.anchor), log, dict(keys))
    if anchored is None:
        return None, None
    return anchored.note, anchored.state


def cmd_audit_verify(args: argparse.Namespace) -> ExitCode:
    """Verify the whole log; against ``--against`` or else the latest anchored checkpoint.

    From an anchored checkpoint with its tree state only the records after it are read
    (``--full`` reads everything); a log shorter than the checkpoint, or one whose first
    records no longer hash to its root, is tampered (exit 4). ``--from URL --source LOGID``
    verifies a log from the central audit store instead (:mod:`guard._cli.log.ship`).
    """
    if args.from_ is not None:
        return cmd_audit_verify_from(
            args, _keyring(args).public_keys(), _render_verify, _checkpoint
        )
    if args.source is not None:
        raise BadInputError("--source", "only goes with --from URL")
    log = _log_path(args)
    keys = _keyring(args).public_keys()
    progress = None if args.json else audit.verify.tty_progress(sys.stderr)
    against, resume = _checkpoint(args, log, keys)
    result = audit.verify.verify_log(
        log,
        keys,
        allow_unanchored=args.allow_unanchored,
        progress=progress,
        against=against,
        resume=None if args.full else resume,
        workers=os.cpu_count() or 1,
    )
    if args.json:
        emit(result)
    else:
        sys.stdout.write(_render_verify(result) + "\n")
    return ExitCode(result.exit_code)


_SHOW_WIDTH = 120  # as the report's compact tables


def cmd_audit_show(args: argparse.Namespace) -> ExitCode:
    every = list(audit.verify.read_records(_log_path(args)))
    if args.tool is not None and not any(r.data.get("toolName") == args.tool for r in every):
        tools = sorted({str(r.data["toolName"]) for r in every if "toolName" in r.data})
        raise BadInputError(
            "--tool",
            "no record of this log names it; it has: " + (", ".join(tools) or "none"),
            args.tool,
        )
    if args.session is not None and not any(
        audit.verify.session_of(r) == args.session for r in every
    ):
        sessions = sorted({s for r in every if (s := audit.verify.session_of(r)) is not None})
        raise BadInputError(
            "--session",
            "no record of this log names it; it has: " + (", ".join(sessions[:20]) or "none"),
            args.session,
        )
    if args.grant is not None and not any(audit.verify.grant_of(r) == args.grant for r in every):
        grants = sorted({g for r in every if (g := audit.verify.grant_of(r)) is not None})
        raise BadInputError(
            "--grant",
            "no record of this log names it; it has: " + (", ".join(grants[:20]) or "none"),
            args.grant,
        )
    records = audit.verify.filter_records(
        every,
        event=args.event,
        tool=args.tool,
        since=args.since,
        until=args.until,
        evidence_id=args.evidence,
        session=args.session,
        grant=args.grant,
    )
    # --json prints each record's line exactly as it stands in the log (canonical bytes).
    sys.stdout.write(
        audit.verify.render_records_jsonl(records)
        if args.json
        else audit.verify.render_records(records, width=None if args.wide else _SHOW_WIDTH)
    )
    return ExitCode.OK


def _sessions_dir(value: str) -> Path:
    directory = Path(value) if value else pi_agent_dir() / "sessions"
    if not directory.is_dir():
        raise BadInputError("--sessions", "is not a directory", directory)
    return directory


def _verify_before_report(args: argparse.Namespace, log: Path) -> ExitCode | None:
    """``None`` if the log may be reported on; else the exit code (the reason is on stderr)."""
    progress = (
        None
        if args.json
        else audit.verify.tty_progress(sys.stderr, label="verifying before report")
    )
    checked = audit.verify.verify_log(
        log,
        _keyring(args).public_keys(),
        allow_unanchored=args.allow_unanchored,
        progress=progress,
    )
    if checked.decision == "tampered":
        sys.stderr.write(f"pi-guard: no report: {_render_verify(checked)}\n")
        return ExitCode.TAMPERED
    if checked.bytes == 0:
        raise BadInputError("audit log", "is empty: not an audit log (no log.created record)", log)
    if checked.exit_code != 0:
        sys.stderr.write(f"pi-guard: no report: {_render_verify(checked)}\n")
        return ExitCode.TAMPERED
    if checked.decision == "unanchored":
        sys.stderr.write(
            "pi-guard: warning: the log is unanchored (no signed head): "
            "records cut from its end cannot be detected\n"
        )
    return None


def cmd_audit_report(args: argparse.Namespace) -> ExitCode:
    """Verify first: a report over a log that does not verify would vouch for a forgery.

    Tampered: exit 4, like ``verify`` (an empty file with a head is a cut log). An
    empty file without a head has no ``log.created`` record and is not an audit log:
    exit 2. No head: exit 4 unless ``--allow-unanchored`` (then a warning on stderr).
    With ``--sessions`` and no log at all, the sessions alone are reported. Executions in
    files a ``log.recovered`` record set aside count too, as rows naming the file; such a
    file missing or changed is exit 4.
    """
    # With --sessions the guard may never have run: no home, no log, is what it shows.
    log = (
        resolve_home(args.home) / AUDIT_LOG_FILE
        if args.sessions is not None and args.log is None
        else _log_path(args)
    )
    if args.sessions is not None and not log.exists():
        # The guard may never have run at all: that is what --sessions is there to show.
        sys.stderr.write(
            f"pi-guard: note: no audit log at {log}: every destructive/protected call in the"
            " sessions counts as guard-absent\n"
        )
        records = []
    else:
        refused = _verify_before_report(args, log)
        if refused is not None:
            return refused
        records = list(audit.verify.read_records(log))
    # What a recovery moved aside still counts: recovering must never launder a gap.
    moved = audit.verify.set_aside_rows(log, records)
    rows, sources = list(moved.rows), list(moved.sources)
    if args.sessions is not None:
        from guard._pi import guard_absent_rows
        from guard._policy import PolicyCache

        classifier = PolicyCache(resolve_home(args.home))
        absent, source = guard_absent_rows(
            _sessions_dir(args.sessions), [*moved.records, *records], classifier
        )
        rows.extend(absent)
        sources.append(source)
    report = audit.verify.build_report(records, external_rows=rows, external_sources=sources)
    if args.json:
        emit(report)
    else:
        sys.stdout.write(audit.verify.render_report(report, wide=args.wide) + "\n")
    return ExitCode.OK if report.decision == "no-gaps" else ExitCode.GAPS


def cmd_audit_recover(args: argparse.Namespace) -> ExitCode:
    """Move a log that does not verify aside and start a new one that records the move."""
    home = existing_home(args.home, "recovery signs with its key")
    from guard._evidence import KeyStore

    store = KeyStore.open(home)
    signer = store.load_signer()
    result = audit.log.recover_log(
        _log_path(args),
        signer,
        lambda: store.public_keyring().public_keys(),
        reason=args.reason,
    )
    if args.json:
        emit(result)
    else:
        where = f" at line {result.line}" if result.line is not None else ""
        sys.stdout.write(
            f"recovered: the damaged log ({result.fault or 'unanchored'}{where}, "
            f"{result.bytes} bytes, {result.sha256}) is kept as {result.moved_to}; "
            f"the new log {result.log_id} records this at seq {result.recovered_seq}\n"
        )
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``audit`` and its subcommands."""
    audit_parser = sub.add_parser("audit", help="verify, show and report on the audit log")
    audit_sub = audit_parser.add_subparsers(
        dest="audit_command", required=True, parser_class=Parser
    )
    verify = audit_sub.add_parser("verify", help="check the hash chain and the signed head")
    verify.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    verify.add_argument("--keyring", default=None, help="public keyring file (default: the home's)")
    verify.add_argument(
        "--allow-unanchored",
        action="store_true",
        help="accept a log without a head file (exit 0 instead of 4)",
    )
    verify.add_argument(
        "--against",
        default=None,
        metavar="CHECKPOINT_FILE",
        help="an earlier signed checkpoint the log must extend (rollback, fork: exit 4)",
    )
    verify.add_argument(
        "--anchor",
        default=None,
        metavar="DIR",
        help="anchor directory to take the latest checkpoint from "
        "(default: $PI_OPERATOR_GUARD_ANCHOR_DIR)",
    )
    verify.add_argument(
        "--full", action="store_true", help="read every record even from an anchored checkpoint"
    )
    verify.add_argument(
        "--from",
        dest="from_",
        default=None,
        metavar="URL",
        help="verify a log from the central PostgreSQL audit store (see audit ship)",
    )
    verify.add_argument(
        "--source", default=None, metavar="LOGID", help="with --from: which log (its log id)"
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
    show.add_argument("--session", default=None, help="pi's session id (records it wrote)")
    show.add_argument(
        "--grant",
        default=None,
        metavar="ID",
        help="a scoped grant's life: its grant.* records and the calls it covered",
    )
    show.add_argument(
        "--wide",
        action="store_true",
        help="one line a record, full timestamps; default wraps the detail to fit 120",
    )
    show.set_defaults(func=cmd_audit_show)
    report = audit_sub.add_parser("report", help="auditable vs audit-gap per executed call")
    report.add_argument("log", nargs="?", default=None)
    report.add_argument(
        "--sessions",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="also read pi's session files under DIR (default: <pi agent dir>/sessions) and "
        "count each destructive/protected call that ran with no guard record (guard-absent)",
    )
    report.add_argument("--keyring", default=None, help="public keyring file (default: the home's)")
    report.add_argument(
        "--allow-unanchored",
        action="store_true",
        help="report on a log without a head file (with a warning) instead of exit 4",
    )
    report.add_argument("--json", action="store_true")
    report.add_argument(
        "--wide", action="store_true", help="every column (call ids, hashes); default fits 120"
    )
    report.set_defaults(func=cmd_audit_report)
    recover = audit_sub.add_parser(
        "recover",
        help="move a damaged log aside and start a new one that records it (operator only)",
    )
    recover.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    recover.add_argument(
        "--reason", required=True, help="why you recover: kept, redacted, in the new log"
    )
    recover.add_argument("--json", action="store_true")
    recover.set_defaults(func=cmd_audit_recover)
    register_audit(audit_sub)
    register_ship(audit_sub)
