"""``audit checkpoint|prove|prove-consistency|verify-proof|anchor`` and verify's anchors.

The checkpoint is the log's signed head (a C2SP signed note). Proof files verify with
nothing but the log's verifier key (``audit checkpoint --vkey``). Anchors keep
checkpoints outside the guard's home (``--to DIR`` or ``PI_OPERATOR_GUARD_ANCHOR_DIR``);
``audit verify`` and ``doctor`` check the log against the latest one automatically.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import audit
import audit.tlog
import audit.verify
from guard._cli.args import Parser, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import BadInputError
from guard._home import AUDIT_LOG_FILE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from audit.tlog import AnchorDir, Anchored, NoteKey, SignedCheckpoint
    from audit.verify import VerifyResult
    from guard._evidence import PublicKeyring

__all__ = [
    "keyring_of",
    "latest_anchor",
    "log_path_of",
    "register_audit",
    "render_verify",
]

_MAX_PROOF_FILE = 16 * 1024 * 1024


def latest_anchor(
    directory: AnchorDir | None, log: Path, keys: dict[str, Ed25519PublicKey]
) -> Anchored | None:
    """The latest anchored checkpoint of ``log`` that verifies; skipped files to stderr."""
    from guard._evidence import latest_anchor as find_latest_anchor

    anchored, problems = find_latest_anchor(directory, log, keys)
    for problem in problems:
        where = directory.path if directory is not None else "?"
        sys.stderr.write(f"pi-guard: warning: anchor {where}: skipped {problem}\n")
    return anchored


def render_verify(result: VerifyResult) -> str:
    """One line for ``audit verify``."""
    if result.decision == "intact":
        text = (
            f"intact: {result.records} records, seq 0..{result.last_seq}, "
            f"head signed by {result.head_key_id}"
        )
        if result.first_line > 1:
            text = (
                f"intact: {result.records} new records read (from line {result.first_line}), "
                f"seq 0..{result.last_seq}, head signed by {result.head_key_id}"
            )
        if result.against_size is not None:
            text += f"; extends the checkpoint of {result.against_size} records"
        return text
    where = f"line {result.line}" if result.line is not None else "head"
    fault = result.fault or result.decision
    return f"{result.decision}: {fault} at {where}: {result.detail}"


def _verified(log: Path, keys: dict[str, Ed25519PublicKey]) -> tuple[bytes, SignedCheckpoint]:
    """The log's checkpoint head, after the whole log verified against it."""
    from guard._evidence import log_origin

    result = audit.verify.verify_log(log, keys)
    if result.decision != "intact":
        raise _Refused(render_verify(result))
    head = log.with_name(log.name + ".head").read_bytes()
    if head[:1] == b"{":
        raise BadInputError(
            "audit log",
            "its head predates checkpoints: the next record the guard appends upgrades it",
            log,
        )
    return head, audit.tlog.open_checkpoint(head, keys, origin=log_origin(log))


class _Refused(Exception):
    """The log does not verify: nothing is proven over it (exit 4)."""


def log_path_of(args: argparse.Namespace) -> Path:
    """The LOG argument, or the home's audit log."""
    if args.log is not None:
        return Path(args.log)
    return existing_home(args.home) / AUDIT_LOG_FILE


def keyring_of(args: argparse.Namespace) -> PublicKeyring:
    """``--keyring`` if given, else the home's public keyring."""
    from guard._evidence import KEYRING_FILE, PublicKeyring

    keyring_path = Path(args.keyring) if args.keyring else existing_home(args.home) / KEYRING_FILE
    return PublicKeyring.load(keyring_path)


def _keys(args: argparse.Namespace) -> dict[str, Ed25519PublicKey]:
    return dict(keyring_of(args).public_keys())


def _log(args: argparse.Namespace) -> Path:
    return log_path_of(args)


def cmd_checkpoint(args: argparse.Namespace) -> ExitCode:
    log = _log(args)
    try:
        note, signed = _verified(log, _keys(args))
    except _Refused as refused:
        sys.stderr.write(f"pi-guard: no checkpoint: {refused}\n")
        return ExitCode.TAMPERED
    if args.vkey:
        sys.stdout.write(signed.signer.vkey() + "\n")
    elif args.json:
        checkpoint = signed.checkpoint
        emit(
            {
                "origin": checkpoint.origin,
                "treeSize": checkpoint.size,
                "root": note.split(b"\n")[2].decode("ascii"),
                "vkey": signed.signer.vkey(),
                "note": note.decode("utf-8"),
            }
        )
    else:
        sys.stdout.write(note.decode("utf-8"))
    return ExitCode.OK


def _write_proof(args: argparse.Namespace, text: str) -> None:
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    if args.json:
        sys.stdout.write(text + "\n")


def cmd_prove(args: argparse.Namespace) -> ExitCode:
    log = _log(args)
    try:
        note, signed = _verified(log, _keys(args))
    except _Refused as refused:
        sys.stderr.write(f"pi-guard: no proof: {refused}\n")
        return ExitCode.TAMPERED
    size = signed.checkpoint.size
    lines, leaves = audit.tlog.log_leaves(log)
    lines, leaves = lines[:size], leaves[:size]
    if len(leaves) != size or audit.tlog.root_of(leaves) != signed.checkpoint.root:
        raise BadInputError("audit log", "changed while the proof was made: run it again", log)
    indexes = audit.tlog.records_about(lines, args.evidence_id)
    if not indexes:
        raise BadInputError("EVIDENCE_ID", "no record in the log names it", args.evidence_id)
    proof = audit.tlog.prove_records(lines, leaves, note, indexes)
    _write_proof(args, proof.model_dump_json(by_alias=True, indent=2))
    if not args.json:
        for index in indexes:
            event = json.loads(lines[index])["event"]
            sys.stdout.write(f"record {index}: {event}: in the tree of {size}\n")
        target = f" to {args.out}" if args.out else " (use --out FILE or --json for the file)"
        sys.stdout.write(f"{len(indexes)} inclusion proof(s) written{target}\n")
    return ExitCode.OK


def _read_note_file(value: str, what: str) -> bytes:
    try:
        with Path(value).open("rb") as handle:
            return handle.read(64 * 1024 + 1)
    except OSError as exc:
        raise BadInputError(what, f"cannot read file: {exc.strerror}", value) from None


def cmd_prove_consistency(args: argparse.Namespace) -> ExitCode:
    log = _log(args)
    keys = _keys(args)
    old_note = _read_note_file(args.checkpoint, "CHECKPOINT")
    try:
        note, signed = _verified(log, keys)
    except _Refused as refused:
        sys.stderr.write(f"pi-guard: no proof: {refused}\n")
        return ExitCode.TAMPERED
    old = audit.tlog.open_checkpoint(old_note, keys, origin=signed.checkpoint.origin)
    result = audit.verify.verify_log(log, keys, against=old_note)
    if result.decision != "intact":
        sys.stderr.write(f"pi-guard: no proof: {render_verify(result)}\n")
        return ExitCode.TAMPERED
    _, leaves = audit.tlog.log_leaves(log)
    leaves = leaves[: signed.checkpoint.size]
    if (
        len(leaves) != signed.checkpoint.size
        or audit.tlog.root_of(leaves) != signed.checkpoint.root
    ):
        raise BadInputError("audit log", "changed while the proof was made: run it again", log)
    proof = audit.tlog.prove_consistency(
        leaves[: signed.checkpoint.size], old_note, old.checkpoint.size, note
    )
    _write_proof(args, proof.model_dump_json(by_alias=True, indent=2))
    if not args.json:
        target = f" to {args.out}" if args.out else " (use --out FILE or --json for the file)"
        sys.stdout.write(
            f"consistency proof {old.checkpoint.size} -> {signed.checkpoint.size} written{target}\n"
        )
    return ExitCode.OK


def _verifier_keys(value: str) -> list[NoteKey]:
    path = Path(value)
    text = value
    if "+" not in value or path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInputError("--key", f"not a vkey and not a readable file ({exc})") from None
    return audit.tlog.parse_vkeys(text)


def cmd_verify_proof(args: argparse.Namespace) -> ExitCode:
    keys = _verifier_keys(args.key)
    try:
        with Path(args.proof).open("rb") as handle:
            raw = handle.read(_MAX_PROOF_FILE + 1)
    except OSError as exc:
        raise BadInputError("PROOF_FILE", f"cannot read file: {exc.strerror}", args.proof) from None
    result = audit.tlog.verify_proof(raw, keys)
    if args.json:
        emit(result)
    else:
        sys.stdout.write(f"{result.decision}: {result.kind}: {result.detail}\n")
        for entry in result.entries:
            status = "ok" if entry.valid else f"NOT PROVEN ({entry.reason})"
            about = f" evidence {entry.evidence_id}" if entry.evidence_id else ""
            sys.stdout.write(f"  record {entry.leaf_index}: {entry.event}{about}: {status}\n")
    return ExitCode(result.exit_code)


def cmd_anchor(args: argparse.Namespace) -> ExitCode:
    from guard._evidence import anchor_checkpoint, anchor_dir

    directory = anchor_dir(args.to)
    if directory is None:
        raise BadInputError(
            "--to", "no anchor directory: give --to DIR or set PI_OPERATOR_GUARD_ANCHOR_DIR"
        )
    log = _log(args)
    try:
        _verified(log, _keys(args))
    except _Refused as refused:
        sys.stderr.write(f"pi-guard: not anchored: {refused}\n")
        return ExitCode.TAMPERED
    written = anchor_checkpoint(directory, log, _keys(args))
    if written.git_problem is not None:
        sys.stderr.write(
            f"pi-guard: warning: anchored, but git commit failed: {written.git_problem}\n"
        )
    if args.json:
        emit(
            {
                "path": str(written.path),
                "created": written.created,
                "treeSize": written.size,
                "git": written.committed,
            }
        )
    else:
        what = "anchored" if written.created else "already anchored"
        git = " (committed to git)" if written.committed else ""
        sys.stdout.write(f"{what}: checkpoint of {written.size} records at {written.path}{git}\n")
    return ExitCode.OK


def register_audit(audit_sub: argparse._SubParsersAction[Parser]) -> None:
    """Add the checkpoint, proof and anchor subcommands to ``audit``."""
    keyring_help = "public keyring file (default: the home's)"
    checkpoint = audit_sub.add_parser("checkpoint", help="print the log's signed checkpoint")
    checkpoint.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    checkpoint.add_argument("--keyring", default=None, help=keyring_help)
    checkpoint.add_argument("--vkey", action="store_true", help="print the verifier key instead")
    checkpoint.add_argument("--json", action="store_true")
    checkpoint.set_defaults(func=cmd_checkpoint)

    prove = audit_sub.add_parser(
        "prove", help="inclusion proofs of the records about one evidence id"
    )
    prove.add_argument("evidence_id", metavar="EVIDENCE_ID")
    prove.add_argument("log", nargs="?", default=None, help="log file (default: the home's)")
    prove.add_argument("--keyring", default=None, help=keyring_help)
    prove.add_argument("--out", default=None, metavar="FILE", help="write the proof file here")
    prove.add_argument("--json", action="store_true", help="print the proof file")
    prove.set_defaults(func=cmd_prove)

    consistency = audit_sub.add_parser(
        "prove-consistency", help="prove the log extends an earlier checkpoint"
    )
    consistency.add_argument("checkpoint", metavar="CHECKPOINT_FILE")
    consistency.add_argument("log", nargs="?", default=None)
    consistency.add_argument("--keyring", default=None, help=keyring_help)
    consistency.add_argument("--out", default=None, metavar="FILE")
    consistency.add_argument("--json", action="store_true", help="print the proof file")
    consistency.set_defaults(func=cmd_prove_consistency)

    check = audit_sub.add_parser(
        "verify-proof", help="check a proof file with nothing but the verifier key"
    )
    check.add_argument("proof", metavar="PROOF_FILE")
    check.add_argument(
        "--key", required=True, metavar="PUBKEY", help="vkey (name+id+key) or a file of vkeys"
    )
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=cmd_verify_proof)

    anchor = audit_sub.add_parser(
        "anchor", help="keep the current checkpoint in an anchor directory (or git repository)"
    )
    anchor.add_argument("log", nargs="?", default=None)
    anchor.add_argument("--keyring", default=None, help=keyring_help)
    anchor.add_argument(
        "--to",
        default=None,
        metavar="DIR",
        help="anchor directory (default: $PI_OPERATOR_GUARD_ANCHOR_DIR)",
    )
    anchor.add_argument("--json", action="store_true")
    anchor.set_defaults(func=cmd_anchor)
