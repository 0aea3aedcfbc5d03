"""``serve`` (the sidecar the pi extension starts) and ``install`` (the extension shim)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from guard._cli.args import Subparsers, int_arg
from guard._cli.exits import ExitCode
from guard._cli.io import emit, end_at_once

if TYPE_CHECKING:
    from guard._pi import Target

__all__ = ["register"]


def cmd_serve(args: argparse.Namespace) -> ExitCode:
    from guard._sidecar import serve

    code = serve(sys.stdin.buffer, sys.stdout.buffer, home=args.home, verify_only=args.verify_only)
    end_at_once()  # what it owes is written and synced; pi waits for this process to end
    return ExitCode(code)


def _target(args: argparse.Namespace) -> tuple[Target, Path | None]:
    if args.package is not None:
        return "package", Path(args.package).absolute()
    if args.project is not None:
        return "project", Path(args.project).absolute()
    return "global", None


def cmd_install(args: argparse.Namespace) -> ExitCode:
    from guard._pi.install import install

    target, directory = _target(args)
    result = install(
        target,
        directory,
        force=args.force,
        uninstall=args.uninstall,
        home=args.home,
        confirm_timeout_ms=args.confirm_timeout_ms,
    )
    for warning in result.warnings:
        sys.stderr.write(f"pi-guard: warning: {warning}\n")
    if args.json:
        emit(result)
    else:
        sys.stdout.write(result.render() + "\n")
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``serve`` and ``install``."""
    serve_parser = sub.add_parser(
        "serve", help="JSON-RPC 2.0 sidecar over stdio (started by the pi extension)"
    )
    serve_parser.add_argument(
        "--verify-only",
        action="store_true",
        help="for monitor consumers: only the public keyring, no signing key",
    )
    serve_parser.set_defaults(func=cmd_serve)

    install_parser = sub.add_parser(
        "install",
        help="install the pi extension shim (default: personal, loads in every folder)",
        description="Without a flag the extension goes into pi's personal extension directory "
        "${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions/operator-guard, which pi loads in "
        "every folder. --project installs into one project instead (pi >= 0.79 loads it "
        "only when that folder is trusted); --package writes a pi package for `pi install`.",
    )
    where = install_parser.add_mutually_exclusive_group()
    where.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="into ${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions (the default)",
    )
    where.add_argument(
        "--project",
        nargs="?",
        const=".",
        default=None,
        metavar="DIR",
        help="into DIR/.pi/extensions (default DIR: current); needs a trusted folder in pi >= 0.79",
    )
    where.add_argument(
        "--package",
        default=None,
        metavar="DIR",
        help="write a pi package folder DIR, then run `pi install DIR`",
    )
    install_parser.add_argument("--uninstall", action="store_true", help="remove it again")
    install_parser.add_argument(
        "--force", action="store_true", help="overwrite (or remove) a modified copy"
    )
    install_parser.add_argument(
        "--confirm-timeout-ms",
        type=int_arg("--confirm-timeout-ms", 1000, 3_600_000),
        default=None,
        help="how long the dialog waits before it counts as a decline (default 60000)",
    )
    install_parser.add_argument("--json", action="store_true", help="print the result as JSON")
    install_parser.set_defaults(func=cmd_install)
