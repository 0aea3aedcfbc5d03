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
from guard._errors import BadInputError, GuardError
from guard._home import pi_agent_dir
from guard._pi.doctor import Check, diagnose
from guard._sandbox import plan as sandbox_plan

__all__ = ["register"]


def check_sandbox(directory: Path, home: Path, agent_dir: Path) -> Check:
    """Will the agent's bash in ``directory`` run inside the sandbox (or is it opted out)?"""
    try:
        planned = sandbox_plan(directory, home, agent_dir=agent_dir)
    except GuardError as exc:
        return Check(
            name="sandbox",
            subject=str(home),
            status="fail",
            reason="sandbox-config",
            detail=str(exc),
            fix="pi-guard policy check " + str(home / "operator-guard.toml"),
        )
    if planned.state == "sandboxed":
        return Check(
            name="sandbox",
            subject=str(home),
            status="ok",
            reason="sandboxed",
            detail=planned.message,
        )
    if planned.state == "unsandboxed":
        return Check(
            name="sandbox",
            subject=str(home),
            status="warn",
            reason="unsandboxed",
            detail=planned.message,
        )
    return Check(
        name="sandbox",
        subject=str(home),
        status="fail",
        reason=planned.reason or "sandbox-unavailable",
        detail=planned.message + " (the agent's bash is blocked)",
        fix="install bubblewrap (apt-get install bubblewrap), or opt out in the user policy: "
        '[sandbox] mode = "off"',
    )


def cmd_doctor(args: argparse.Namespace) -> ExitCode:
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
