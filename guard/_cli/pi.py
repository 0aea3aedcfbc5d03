"""Subcommands that connect the guard to pi: ``serve`` and ``install``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    Sub = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = ["add_serve_parsers"]


def cmd_serve(args: argparse.Namespace) -> int:
    from guard._sidecar.methods import serve

    return serve(sys.stdin.buffer, sys.stdout.buffer, home=args.home, verify_only=args.verify_only)


def cmd_install(args: argparse.Namespace) -> int:
    from guard._pi.install import install

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
    return 0


def _positive_ms(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer of milliseconds, got {text!r}"
        ) from None
    if not 1000 <= value <= 3_600_000:
        raise argparse.ArgumentTypeError(f"must be 1000..3600000 ms, got {value}")
    return value


def add_serve_parsers(sub: Sub) -> None:
    serve = sub.add_parser(
        "serve", help="JSON-RPC 2.0 sidecar over stdio (started by the pi extension)"
    )
    serve.add_argument(
        "--verify-only",
        action="store_true",
        help="for monitor consumers: only the public keyring, no signing key",
    )
    serve.set_defaults(func=cmd_serve)

    install = sub.add_parser("install", help="install the pi extension shim")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--project", default=None, help="project directory (default: current)")
    where.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="into ${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions",
    )
    install.add_argument("--uninstall", action="store_true", help="remove it again")
    install.add_argument("--force", action="store_true", help="overwrite a modified copy")
    install.add_argument(
        "--confirm-timeout-ms",
        type=_positive_ms,
        default=None,
        help="how long the dialog waits before it counts as a decline (default 60000)",
    )
    install.add_argument("--json", action="store_true", help="print the result as JSON")
    install.set_defaults(func=cmd_install)
