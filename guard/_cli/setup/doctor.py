"""``doctor [DIR]``: will the guard load, and guard, for a pi session in DIR?

Exit 0 when every check passed (warnings allowed), 8 (``NOT_GUARDED``) when one failed,
2 when DIR is not a directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from guard._cli.args import Subparsers
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import BadInputError
from guard._home import pi_agent_dir

__all__ = ["register"]


def cmd_doctor(args: argparse.Namespace) -> ExitCode:
    from guard._pi import check_warm, diagnose
    from guard._sandbox.doctor import check_sandbox

    directory = Path(args.directory).absolute()
    if not directory.is_dir():
        raise BadInputError("directory", "is not a directory", directory)
    pi = Path(args.pi) if args.pi is not None else None
    report = diagnose(
        directory,
        agent_dir=pi_agent_dir().absolute(),
        home=args.home,
        pi=pi,
        sandbox_check=check_sandbox,
        warm_check=check_warm,
    )
    if args.json:
        emit(report)
    else:
        sys.stdout.write(report.render() + "\n")
    return ExitCode.OK if report.decision == "ready" else ExitCode.NOT_GUARDED


def register(sub: Subparsers) -> None:
    """Add ``doctor``."""
    doctor = sub.add_parser(
        "doctor",
        help="will the guard load and guard in a folder? (exit 0 yes, 8 no)",
        description="Checks, read-only, whether a pi session in DIR runs with the guard: "
        "pi and Node versions, which copies are installed and load (global, project, "
        "package; duplicates), pi's project-trust decision for DIR, each guard.json and its "
        "Python, the home, the signing key and the audit log. Exit 0 when every check "
        "passes (warnings allowed), 8 when one fails.",
    )
    doctor.add_argument(
        "directory", nargs="?", default=".", metavar="DIR", help="the folder pi runs in"
    )
    doctor.add_argument(
        "--pi",
        default=None,
        metavar="PATH",
        help="check this pi executable (default: PATH, npm -g)",
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(func=cmd_doctor)
