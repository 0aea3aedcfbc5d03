"""``serve`` (the sidecar the pi extension starts) and ``install`` (the extension shim)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guard._cli.args import Subparsers, int_arg
from guard._cli.exits import ExitCode
from guard._pi.install import install
from guard._sidecar.methods import serve

__all__ = ["register"]


def cmd_serve(args: argparse.Namespace) -> ExitCode:
    code = serve(sys.stdin.buffer, sys.stdout.buffer, home=args.home, verify_only=args.verify_only)
    return ExitCode(code)


def cmd_install(args: argparse.Namespace) -> ExitCode:
    project = None if args.global_ else Path(args.project or ".").absolute()
    result = install(
        "global" if args.global_ else "project",
        project,
        force=args.force,
        uninstall=args.uninstall,
        home=args.home,
        confirm_timeout_ms=args.confirm_timeout_ms,
    )
    if args.json:
        sys.stdout.write(json.dumps(result.model_dump(mode="json"), indent=2) + "\n")
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

    install_parser = sub.add_parser("install", help="install the pi extension shim")
    where = install_parser.add_mutually_exclusive_group()
    where.add_argument("--project", default=None, help="project directory (default: current)")
    where.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="into ${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions",
    )
    install_parser.add_argument("--uninstall", action="store_true", help="remove it again")
    install_parser.add_argument("--force", action="store_true", help="overwrite a modified copy")
    install_parser.add_argument(
        "--confirm-timeout-ms",
        type=int_arg("--confirm-timeout-ms", 1000, 3_600_000),
        default=None,
        help="how long the dialog waits before it counts as a decline (default 60000)",
    )
    install_parser.add_argument("--json", action="store_true", help="print the result as JSON")
    install_parser.set_defaults(func=cmd_install)
