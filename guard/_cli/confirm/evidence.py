"""``keygen``, ``keys rotate|list``, ``evaluate``, ``record`` and ``consume``.

Each command imports the guard where it runs: building the parser (``--help``, any other
command) does not load it.
"""

from __future__ import annotations

import argparse
import sys

from guard._cli.args import (
    Parser,
    Subparsers,
    add_call_options,
    call_args,
    existing_home,
    int_arg,
)
from guard._cli.exits import ExitCode
from guard._cli.io import emit, read_file_arg
from guard._evidence import DEFAULT_TTL_SECONDS
from guard._home import resolve_home

__all__ = ["register"]


def cmd_keygen(args: argparse.Namespace) -> ExitCode:
    from guard._evidence import KeyStore
    from guard._facade import Guard

    signed = False
    if args.trust_keyring:
        # The operator vouches for the keyring as it is (check `keys list` first).
        signed = KeyStore.open(resolve_home(args.home)).trust_unsigned_keyring()
    with Guard.open(args.home) as guard:
        emit(
            {
                "keyId": guard.key_id,
                "created": guard.key_created,
                "home": str(guard.home),
                **({"keyringSigned": signed} if args.trust_keyring else {}),
            }
        )
    return ExitCode.OK


def cmd_keys_rotate(args: argparse.Namespace) -> ExitCode:
    from guard._facade import Guard

    with Guard.open(args.home) as guard:
        old, new = guard.rotate_key()
        emit({"oldKeyId": old, "newKeyId": new})
    return ExitCode.OK


def cmd_keys_list(args: argparse.Namespace) -> ExitCode:
    from guard._facade import Guard

    with Guard.open(existing_home(args.home)) as guard:  # a listing never makes a home
        emit(guard.keyring())
    return ExitCode.OK


def cmd_evaluate(args: argparse.Namespace) -> ExitCode:
    from guard._facade import Guard

    tool, tool_input, cwd = call_args(args)
    with Guard.open(args.home) as guard:
        emit(guard.evaluate(tool, tool_input, cwd))
    return ExitCode.OK


def cmd_record(args: argparse.Namespace) -> ExitCode:
    from guard._facade import Guard

    tool, tool_input, cwd = call_args(args)
    with Guard.open(args.home) as guard:
        result = guard.record(
            tool,
            tool_input,
            cwd,
            confirmed=args.confirmed,
            ttl_seconds=args.ttl,
            tool_call_id=args.tool_call_id,
        )
    emit(result)
    if result.decision == "invalid":
        sys.stderr.write(f"pi-guard: error: nothing recorded: {', '.join(result.reasons)}\n")
        return ExitCode.BAD_INPUT
    return ExitCode.OK


def cmd_consume(args: argparse.Namespace) -> ExitCode:
    from guard._facade import Guard

    envelope = read_file_arg(args.envelope, "--envelope")
    tool, tool_input, cwd = call_args(args)
    with Guard.open(args.home) as guard:
        result = guard.consume(
            envelope,
            tool,
            tool_input,
            cwd,
            tool_call_id=args.tool_call_id,
            call_checked_elsewhere=args.call_checked_elsewhere,
            require_dialog=args.require_dialog,
            require_operator_signature=args.require_operator_signature,
        )
    emit(result)
    return ExitCode.OK if result.decision == "consumed" else ExitCode.REJECTED


def register(sub: Subparsers) -> None:
    """Add the evidence commands."""
    p = sub.add_parser("keygen", help="create the signing key if there is none")
    p.add_argument(
        "--trust-keyring",
        action="store_true",
        help="sign the keyring as it is with the signing key (an unsigned keyring from an "
        "older version); check `keys list` first",
    )
    p.set_defaults(func=cmd_keygen)
    keys = sub.add_parser("keys", help="key rotation and the public keyring")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, parser_class=Parser)
    keys_sub.add_parser("rotate", help="retire the active key, make a new one").set_defaults(
        func=cmd_keys_rotate
    )
    keys_sub.add_parser("list", help="print the public keyring").set_defaults(func=cmd_keys_list)

    p = sub.add_parser("evaluate", help="classify a pending tool call")
    add_call_options(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("record", help="record the operator's answer; a yes mints evidence")
    add_call_options(p)
    answer = p.add_mutually_exclusive_group(required=True)
    answer.add_argument("--confirmed", dest="confirmed", action="store_true")
    answer.add_argument("--declined", dest="confirmed", action="store_false")
    p.add_argument(
        "--ttl",
        # Any integer parses; the facade refuses one outside 1..max with a TtlError.
        type=int_arg("--ttl", -(2**63), 2**63),
        default=DEFAULT_TTL_SECONDS,
        help=f"evidence lifetime in seconds, 1..600 (default {DEFAULT_TTL_SECONDS})",
    )
    p.add_argument("--tool-call-id", default=None)
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("consume", help="check evidence against a pending call and consume it once")
    p.add_argument("--envelope", required=True, help="envelope JSON file, or - for stdin")
    add_call_options(p)
    p.add_argument(
        "--tool-call-id",
        default=None,
        help="the pending call's id: evidence bound to another call is rejected, and "
        "evidence bound to a call is rejected without it (call-id-required, exit 3)",
    )
    p.add_argument(
        "--call-checked-elsewhere",
        action="store_true",
        help="consume evidence bound to a call without --tool-call-id: say so only when you "
        "tie the evidence to the pending call some other way",
    )
    p.add_argument(
        "--require-dialog",
        action="store_true",
        help="reject evidence a scoped grant covered (origin runtime-grant; decision "
        "not-dialog, exit 3) without consuming it",
    )
    p.add_argument(
        "--require-operator-signature",
        action="store_true",
        help="reject evidence without the operator's own passkey signature (decision "
        "not-operator-signed, exit 3) without consuming it; the user's policy can require "
        "it too ([evidence] require_operator_signature)",
    )
    p.set_defaults(func=cmd_consume)
