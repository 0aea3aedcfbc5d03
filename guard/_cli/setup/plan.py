"""``plan channel|signal-source|runtime-consumption``: the read-only planners."""

from __future__ import annotations

import argparse

from guard._cli.args import Subparsers
from guard._cli.exits import ExitCode
from guard._cli.io import emit, read_text_arg
from guard._home import AUDIT_LOG_FILE, resolve_home
from planning import PLANNERS

__all__ = ["register"]


def cmd_plan(args: argparse.Namespace) -> ExitCode:
    """Print a plan; audit ``planner.reported`` only when the home's audit log exists.

    Planning is read-only: it never creates a home, a key or a log as a side effect.
    """
    from guard._facade import Guard, plan_input

    raw = read_text_arg(args.input, "--input") if args.input is not None else "{}"
    home = resolve_home(args.home)
    if (home / AUDIT_LOG_FILE).exists():
        with Guard.open(home) as guard:
            emit(guard.plan(args.planner, raw))
    else:
        emit(PLANNERS[args.planner].run(plan_input(args.planner, raw)))
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``plan``."""
    plan = sub.add_parser("plan", help="read-only planners; report-only, authorize nothing")
    plan.add_argument("planner", choices=sorted(PLANNERS))
    plan.add_argument("--input", default=None, help="planner input as JSON, or - for stdin")
    plan.set_defaults(func=cmd_plan)
