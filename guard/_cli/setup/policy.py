"""``pi-guard policy show`` and ``pi-guard policy check [FILE]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Literal

from guard._cli.args import Parser, Subparsers
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import ConfigError
from guard._home import resolve_home

__all__ = ["register"]


def cmd_policy_show(args: argparse.Namespace) -> ExitCode:
    """Print the effective merged policy, each rule with the layer it came from."""
    from guard._policy import Policy

    home = resolve_home(getattr(args, "home", None))
    project: Path | None = getattr(args, "project", None)
    policy = Policy.load(home, project if project is not None else Path.cwd())
    emit(policy.describe())
    return ExitCode.OK


def cmd_policy_check(args: argparse.Namespace) -> ExitCode:
    """Validate one config file (default: the home's user file); problems go to stdout as
    JSON and fail with exit code 2. The user file may be absent: the built-in policy applies."""
    from guard._policy import CONFIG_FILE_NAME, check_config_file

    layer: Literal["user", "project"] | None = args.layer
    if args.file is None:
        path = resolve_home(getattr(args, "home", None)) / CONFIG_FILE_NAME
        if not path.exists():
            emit({"file": str(path), "valid": True, "problems": []})
            sys.stderr.write(
                f"pi-guard: no user policy file ({path}): the built-in policy applies\n"
            )
            return ExitCode.OK
        layer = layer or "user"
    else:
        path = Path(args.file)
    problems = check_config_file(path, layer=layer)
    emit({"file": str(path), "valid": not problems, "problems": [str(p) for p in problems]})
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(path, f"{problems[0]}{more}")
    return ExitCode.OK


def register(subparsers: Subparsers) -> None:
    """Add ``policy show`` and ``policy check FILE``."""
    policy = subparsers.add_parser("policy", help="show or check the layered policy")
    sub = policy.add_subparsers(dest="policy_command", required=True, parser_class=Parser)
    show = sub.add_parser("show", help="print the effective policy and where each rule came from")
    # SUPPRESS: never overwrite a --project the main parser may already have set.
    show.add_argument(
        "--project",
        type=Path,
        default=argparse.SUPPRESS,
        help="project directory (default: the current directory)",
    )
    show.set_defaults(func=cmd_policy_show)
    check = sub.add_parser("check", help="validate a policy file (TOML)")
    check.add_argument(
        "file",
        nargs="?",
        default=None,
        help="the operator-guard.toml to check (default: the user file in the home)",
    )
    check.add_argument(
        "--layer",
        choices=("user", "project"),
        default=None,
        help="judge the file as this layer (default: project inside .pi/, else user)",
    )
    check.set_defaults(func=cmd_policy_check)
