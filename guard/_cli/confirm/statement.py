"""``pi-guard evidence export ID --dsse`` and ``evidence verify-dsse FILE --key PUBKEY``:
evidence as an in-toto Statement in a DSSE envelope (docs/dsse.md).

``export`` signs with the home's key, from the verified audit log's ``confirmation.recorded``
record of ``ID``; ``verify-dsse`` needs only a public key (a PEM file or a keyring file). A
refused envelope is one line on stderr and exit 3, its check on stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from guard._cli.args import Parser, Subparsers, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import emit, load_json_object, read_file_arg

__all__ = ["register"]


def cmd_evidence_export(args: argparse.Namespace) -> ExitCode:
    from guard._evidence import KeyStore, dsse_from_log
    from guard._home import AUDIT_LOG_FILE

    home = existing_home(args.home)
    signer, ring = KeyStore.open(home).load_trusted()
    envelope = dsse_from_log(home / AUDIT_LOG_FILE, ring.public_keys(), args.id, signer)
    emit(envelope)
    return ExitCode.OK


def cmd_evidence_verify_dsse(args: argparse.Namespace) -> ExitCode:
    from guard._evidence import read_public_key, verify_dsse

    raw = load_json_object(read_file_arg(args.file, "FILE"), "FILE")
    key = read_public_key(Path(args.key))
    check = verify_dsse(raw, key)
    emit(check)
    if check.decision != "verified":
        sys.stderr.write(f"pi-guard: rejected: {check.reason}: {check.detail}\n")
        return ExitCode.REJECTED
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``evidence export`` and ``evidence verify-dsse``."""
    group = sub.add_parser(
        "evidence", help="evidence in standard envelopes (an in-toto Statement in DSSE)"
    )
    evidence_sub = group.add_subparsers(dest="evidence_command", required=True, parser_class=Parser)
    p = evidence_sub.add_parser(
        "export",
        help="the recorded yes of evidence ID as an in-toto Statement in a DSSE envelope, "
        "signed with the guard's key",
    )
    p.add_argument("id", metavar="ID", help="the evidence id (oce_…)")
    p.add_argument(
        "--dsse",
        action="store_true",
        required=True,
        help="the format: a DSSE envelope (payloadType application/vnd.in-toto+json)",
    )
    p.set_defaults(func=cmd_evidence_export)
    p = evidence_sub.add_parser(
        "verify-dsse",
        help="check a DSSE envelope of an operator decision (exit 3 when refused)",
    )
    p.add_argument("file", metavar="FILE", help="the envelope JSON file, or - for stdin")
    p.add_argument(
        "--key",
        required=True,
        metavar="PUBKEY",
        help="the guard's public key: a PEM file, or a keyring file (its active key)",
    )
    p.set_defaults(func=cmd_evidence_verify_dsse)
