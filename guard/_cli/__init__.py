"""``pi-guard``: the command-line boundary, where our errors become one line and an exit code.

One module per command group, each with ``register(subparsers)``, in three rooms: ``confirm/``
(``evidence``, ``statement``, ``ledger``, ``grants``, ``approvals``, ``operator``), ``log/``
(``audit`` with ``tlog`` and ``ship``) and ``setup/`` (``pi``, ``doctor``, ``sandbox``,
``policy``, ``plan``, ``demo``). Exit codes live in :mod:`guard._cli.exits` with the one
table that maps our exceptions to them. A new command group is a new module in one of those
rooms and one line in :data:`_GROUPS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from guard._cli.args import Parser, Subparsers, home_arg
from guard._cli.confirm import approvals, evidence, grants, ledger, operator, statement
from guard._cli.exits import ExitCode, exit_for
from guard._cli.log import audit
from guard._cli.setup import demo, doctor, pi, plan, policy, sandbox
from guard._home import DEBUG_ENV, env_flag
from guard._logging import defer_logging

__all__ = ["ExitCode", "build_parser", "main", "run"]

Handler = Callable[[argparse.Namespace], ExitCode]

_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    evidence.register,
    statement.register,
    plan.register,
    audit.register,
    ledger.register,
    grants.register,
    approvals.register,
    operator.register,
    policy.register,
    pi.register,
    doctor.register,
    demo.register,
    sandbox.register,
)


def build_parser() -> argparse.ArgumentParser:
    """The whole ``pi-guard`` command line."""
    parser = Parser(
        prog="pi-guard",
        description="Signed, single-use operator confirmation evidence and a tamper-evident "
        "audit log for the pi coding agent. Report-only: nothing here authorizes a tool call.",
    )
    parser.add_argument(
        "--home",
        type=home_arg,
        default=None,
        help="guard home (default: $PI_OPERATOR_GUARD_HOME or "
        "${PI_CODING_AGENT_DIR:-~/.pi/agent}/operator-guard)",
    )
    sub: Subparsers = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for register in _GROUPS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code. Never raises for our own errors."""
    defer_logging()  # structlog is imported for the first line written, not before
    try:
        args = build_parser().parse_args(argv)
        handler: Handler = args.func
        return int(handler(args))
    except KeyboardInterrupt:
        sys.stderr.write("pi-guard: interrupted\n")
        return 130
    except BrokenPipeError:
        return ExitCode.OK
    except Exception as exc:  # the one place an exception becomes a line and an exit code
        known = exit_for(exc)
        if known is None or known[0] is ExitCode.INTERNAL:
            if env_flag(DEBUG_ENV):
                raise
            detail = f"{type(exc).__name__}: {exc}" if known is None else str(exc)
            sys.stderr.write(f"pi-guard: internal error: {detail}\n")
            return ExitCode.INTERNAL
        code, prefix = known
        sys.stderr.write(f"pi-guard: {prefix}: {exc}\n")
        return int(code)


def run() -> NoReturn:
    """The console script's entry point."""
    from guard._cli.io import exit_process

    exit_process(main())
