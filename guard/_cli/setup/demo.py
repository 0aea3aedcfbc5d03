"""``demo``: the whole story in a temporary home, in pure Python (``make demo`` runs pi)."""

from __future__ import annotations

import argparse
import sys

from guard._cli.args import Subparsers
from guard._cli.exits import ExitCode

__all__ = ["register"]


def cmd_demo(args: argparse.Namespace) -> ExitCode:
    from guard._cli.setup.story import run_demo

    return ExitCode(run_demo(sys.stdout))


def register(sub: Subparsers) -> None:
    """Add ``demo``."""
    sub.add_parser(
        "demo", help="a short demonstration in a temporary home (make demo runs the real pi)"
    ).set_defaults(func=cmd_demo)
