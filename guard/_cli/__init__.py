"""``pi-guard``: the command-line boundary, where our errors become one line and an exit code.

Exit codes (contract section 9): 0 ok / consumed / intact, 1 unexpected internal
error, 2 bad usage or bad input, 3 evidence rejected, 4 audit integrity failure,
5 audit report found gaps.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from audit import AuditError, LogFormatError, LogIntegrityError
from guard._cli.io import emit, load_json_object, read_file_arg, read_text_arg
from guard._errors import BadInputError, GuardError
from guard._guard import Guard
from guard._logging import configure_logging
from planning import PlanningError

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_OK", "EXIT_REJECTED", "main"]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_REJECTED = 3
EXIT_TAMPERED = 4
EXIT_GAPS = 5

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _open(args: argparse.Namespace) -> Guard:
    return Guard.open(args.home)


def _call_args(args: argparse.Namespace) -> tuple[str, dict[str, object], Path]:
    tool_input = load_json_object(read_text_arg(args.input, "--input"), "--input")
    cwd = Path(args.cwd) if args.cwd is not None else Path.cwd()
    return args.tool, tool_input, cwd


def cmd_keygen(args: argparse.Namespace) -> int:
    with _open(args) as guard:
        emit({"keyId": guard.key_id, "created": guard.key_created, "home": str(guard.home)})
    return EXIT_OK


def cmd_keys_rotate(args: argparse.Namespace) -> int:
    with _open(args) as guard:
        old, new = guard.rotate_key()
        emit({"oldKeyId": old, "newKeyId": new})
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    with _open(args) as guard:
        emit(guard.keyring())
    return EXIT_OK


def cmd_evaluate(args: argparse.Namespace) -> int:
    tool, tool_input, cwd = _call_args(args)
    with _open(args) as guard:
        emit(guard.evaluate(tool, tool_input, cwd))
    return EXIT_OK


def cmd_record(args: argparse.Namespace) -> int:
    tool, tool_input, cwd = _call_args(args)
    with _open(args) as guard:
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
        return EXIT_BAD_INPUT
    return EXIT_OK


def cmd_consume(args: argparse.Namespace) -> int:
    envelope = read_file_arg(args.envelope, "--envelope")
    tool, tool_input, cwd = _call_args(args)
    with _open(args) as guard:
        result = guard.consume(envelope, tool, tool_input, cwd)
    emit(result)
    return EXIT_OK if result.decision == "consumed" else EXIT_REJECTED


def cmd_demo(args: argparse.Namespace) -> int:
    if args.real_pi:
        from tools.pi.harness import run_pi_demo

        return run_pi_demo(sys.stdout)
    from guard._demo import run_demo

    return run_demo(sys.stdout)


def _add_call_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tool", required=True, help="exact tool name, e.g. bash")
    parser.add_argument(
        "--input", required=True, help="the tool input as a JSON object, or - for stdin"
    )
    parser.add_argument("--cwd", default=None, help="workspace root (default: current directory)")


def _ttl(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--ttl must be an integer number of seconds, got {text!r}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pi-guard",
        description="Signed, single-use operator confirmation evidence and a tamper-evident "
        "audit log for the pi coding agent. Report-only: nothing here authorizes a tool call.",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="guard home (default: $PI_OPERATOR_GUARD_HOME or "
        "${PI_CODING_AGENT_DIR:-~/.pi/agent}/operator-guard)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("keygen", help="create the signing key if there is none")
    p.set_defaults(func=cmd_keygen)
    keys = sub.add_parser("keys", help="key rotation and the public keyring")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, parser_class=_Parser)
    keys_sub.add_parser("rotate", help="retire the active key, make a new one").set_defaults(
        func=cmd_keys_rotate
    )
    keys_sub.add_parser("list", help="print the public keyring").set_defaults(func=cmd_keys_list)

    p = sub.add_parser("evaluate", help="classify a pending tool call")
    _add_call_options(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("record", help="record the operator's answer; a yes mints evidence")
    _add_call_options(p)
    answer = p.add_mutually_exclusive_group(required=True)
    answer.add_argument("--confirmed", dest="confirmed", action="store_true")
    answer.add_argument("--declined", dest="confirmed", action="store_false")
    p.add_argument(
        "--ttl", type=_ttl, default=30, help="evidence lifetime, 1..600 seconds (default 30)"
    )
    p.add_argument("--tool-call-id", default=None)
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("consume", help="check evidence against a pending call and consume it once")
    p.add_argument("--envelope", required=True, help="envelope JSON file, or - for stdin")
    _add_call_options(p)
    p.set_defaults(func=cmd_consume)

    p = sub.add_parser("demo", help="a short demonstration in a temporary home")
    p.add_argument(
        "--real-pi",
        action="store_true",
        help="run the real pi (installed into .cache/pi) against a scripted model",
    )
    p.set_defaults(func=cmd_demo)

    for register in _extensions():
        register(sub)
    return parser


def _extensions() -> list[Callable[[Any], None]]:
    """Subcommands that live in their own modules."""
    from guard._cli.more import register_all

    return register_all()


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging()
    try:
        args = build_parser().parse_args(argv)
        handler: Handler = args.func
        return handler(args)
    except BadInputError as exc:
        sys.stderr.write(f"pi-guard: error: {exc}\n")
        return EXIT_BAD_INPUT
    except GuardError as exc:
        sys.stderr.write(f"pi-guard: error: {exc}\n")
        return exc.exit_code
    except PlanningError as exc:
        sys.stderr.write(f"pi-guard: error: {exc}\n")
        return EXIT_BAD_INPUT
    except (LogFormatError, LogIntegrityError) as exc:
        sys.stderr.write(f"pi-guard: audit integrity failure: {exc}\n")
        return EXIT_TAMPERED
    except AuditError as exc:
        sys.stderr.write(f"pi-guard: audit error: {exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("pi-guard: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the one place a stray exception becomes a line, not a traceback
        if os.environ.get("PI_GUARD_DEBUG"):
            raise
        sys.stderr.write(f"pi-guard: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_INTERNAL


def run() -> NoReturn:
    sys.exit(main())
