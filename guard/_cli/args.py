"""The argument conventions every ``pi-guard`` command module shares.

Each command module has one ``register(subparsers)`` that adds its parsers and sets
``func`` on each to a handler ``(argparse.Namespace) -> ExitCode``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from guard._cli.exits import ExitCode
from guard._cli.io import load_json_object, read_text_arg
from guard._errors import BadInputError
from guard._home import resolve_home

__all__ = [
    "Parser",
    "Subparsers",
    "add_call_options",
    "call_args",
    "existing_home",
    "home_arg",
    "int_arg",
]

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = argparse._SubParsersAction


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def home_arg(text: str) -> Path:
    """``--home``: a directory; an empty value is refused (``Path("")`` would mean ``.``)."""
    if text == "":
        raise argparse.ArgumentTypeError("--home must not be empty")
    return Path(text)


def existing_home(home: Path | None, why: str = "") -> Path:
    """The guard home a command reads (``--home``, else the default), which must exist.

    Every command that reads a home and finds none says so in the same words, exit 2; the
    commands that make one (``keygen``, ``evaluate``, ``serve`` …) never call this.
    """
    resolved = resolve_home(home)
    if not resolved.is_dir():
        raise BadInputError("--home", "no guard home here" + (f" ({why})" if why else ""), resolved)
    return resolved


def int_arg(what: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type for an integer in ``low..high``; the message names ``what``."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low}..{high}, got {value}")
        return value

    return parse


def add_call_options(parser: argparse.ArgumentParser) -> None:
    """``--tool``, ``--input`` and ``--cwd``: the pending tool call."""
    parser.add_argument("--tool", required=True, help="exact tool name, e.g. bash")
    parser.add_argument(
        "--input", required=True, help="the tool input as a JSON object, or - for stdin"
    )
    parser.add_argument("--cwd", default=None, help="workspace root (default: current directory)")


def call_args(args: argparse.Namespace) -> tuple[str, dict[str, object], Path]:
    """The tool name, the parsed tool input and the workspace root of the pending call."""
    tool_input = load_json_object(read_text_arg(args.input, "--input"), "--input")
    cwd = Path(args.cwd) if args.cwd is not None else Path.cwd()
    return args.tool, tool_input, cwd
