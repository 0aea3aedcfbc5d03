"""``pi-guard sandbox check|run|argv``: the OS sandbox the agent's shell commands run in.

* ``check`` probes bubblewrap and prints the effective ``[sandbox]`` settings; exit 0 when
  the sandbox can be used here, 7 (``ExitCode.SANDBOX``) with the reason otherwise;
* ``run -- CMD…`` runs one command exactly as the agent's bash would (pi's shell, ``exec``
  bwrap, the inner shell) and exits with its status; 7 when the sandbox is required but
  cannot start (the command is not run). It writes the workspace directly: the effects
  review (a layer per command, reviewed when it ends) is the pi session's;
* ``argv --command STR`` prints the shell text pi's bash spawn hook returns for STR
  (``--json``: the session plan, the full argv and that text).

Inside pi the shim gets the same plan from the sidecar (``sandbox.plan``, once per session,
audited as ``session.started``) and its bash spawn hook does what ``argv`` prints: the plan's
``prefix``, a space, the command in POSIX single quotes; ``unsetEnv`` removed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard._cli.args import Parser, Subparsers
from guard._cli.exits import ExitCode
from guard._cli.io import emit
from guard._errors import BadInputError
from guard._home import ensure_private_dir, resolve_home

if TYPE_CHECKING:
    from guard._sandbox import SandboxPlan

__all__ = ["register"]


def _session(
    args: argparse.Namespace, *, layers: str | None = None, make_home: bool = False
) -> tuple[SandboxPlan, dict[str, Any]]:
    from guard._sandbox import effective_settings, plan

    home = resolve_home(getattr(args, "home", None))
    if make_home:
        # A path the sandbox hides must exist when it is built: a home that does not exist
        # yet is not hidden, and a sidecar starting beside this command (pi starts an MCP
        # server and the guard at once) would create the signing key inside it, readable.
        ensure_private_dir(home)
    cwd = Path(args.cwd or os.getcwd())
    settings, source, problems = effective_settings(home, cwd.absolute())
    session = plan(
        cwd, home, settings=settings, settings_from=source, shell=args.shell, layers=layers
    )
    facts = {
        "settings": settings.model_dump(mode="json"),
        "settingsFrom": source,
        "problems": [str(p) for p in problems],
    }
    return session, facts


def cmd_check(args: argparse.Namespace) -> ExitCode:
    from guard._sandbox import find_bwrap, probe

    # A scratch place for the layers, so the overlay of the effects review is probed too.
    with tempfile.TemporaryDirectory(prefix="pi-guard-check-") as scratch:
        session, facts = _session(args, layers=os.path.join(scratch, "layers"))
    settings = facts["settings"]
    probed = probe(find_bwrap(settings["bwrap"]))
    usable = probed.ok and session.state != "unavailable"
    if args.json:
        emit({"usable": usable, "probe": probed.model_dump(mode="json"),
              "plan": session.model_dump(mode="json"), **facts})  # fmt: skip
    else:
        lines = [
            f"sandbox:  {session.state}" + (f" [{session.reason}]" if session.reason else ""),
            f"probe:    {probed.status}: {probed.message}",
            f"mode:     {settings['mode']} (from the {facts['settingsFrom']} layer)",
            f"writable: {session.cwd} (workspace)"
            + "".join(f", {w}" for w in settings["writable"])
            if session.workspace_writable
            else "writable: " + (", ".join(settings["writable"]) or "nothing")
            + f" ({session.cwd}, the workspace, is read-only here)",
            f"tmp:      {settings['tmp']}; network: {settings['network']['mode']}"
            + (f" ({', '.join(settings['network']['allow'])})"
               if settings["network"]["mode"] == "allowlist" else ""),
            f"effects:  {session.effects} ({_effects_why(session, settings)})",
        ]  # fmt: skip
        if settings["hidden"]:
            lines.append("hidden:   " + ", ".join(settings["hidden"]) + " (and the guard home)")
        if session.state != "sandboxed" or not session.workspace_writable:
            lines.append(f"          {session.message}")
        lines += [f"note:     {n}" for n in session.notes]
        lines += [f"problem:  {p}" for p in facts["problems"]]
        sys.stdout.write("\n".join(lines) + "\n")
    if not usable:
        return ExitCode.SANDBOX
    # The user's policy could not be read: the sandbox runs, stricter than the file may say.
    unparsed = any("until this file can be read" in p for p in facts["problems"])
    return ExitCode.BAD_INPUT if unparsed else ExitCode.OK


def _effects_why(session: SandboxPlan, settings: dict[str, Any]) -> str:
    """Why the effects review is on or off for this folder, in the operator's words."""
    if session.effects == "review":
        return "in pi, every command writes the workspace through a layer the guard reviews"
    if session.state != "sandboxed":
        return "the review needs the sandbox, and commands here run without it"
    if settings["effects"] == "off":
        return 'your policy says [sandbox] effects = "off"'
    if not session.workspace_writable:
        return "the workspace is read-only here, so there is nothing to review"
    return next(
        (n.removeprefix("the effects review is off: ") for n in session.notes
         if n.startswith("the effects review is off: ")),
        "no layer can be mounted here",
    )  # fmt: skip


def _command_text(words: list[str]) -> str:
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise BadInputError("command", "nothing to run: give it after --")
    # One word is a shell command line (what the agent's bash receives); more are argv.
    return words[0] if len(words) == 1 else shlex.join(words)


def cmd_run(args: argparse.Namespace) -> int:
    from guard._sandbox import SpawnContext, spawn

    session, _ = _session(args, make_home=True)
    command = _command_text(list(args.words))
    context = spawn(session, SpawnContext(command=command, cwd=session.cwd, env=dict(os.environ)))
    if session.state == "unsandboxed":
        sys.stderr.write(f"pi-guard: {session.message}\n")
    done = subprocess.run(
        [args.shell, "-c", context.command], cwd=context.cwd, env=context.env, check=False
    )
    return done.returncode if done.returncode >= 0 else 128 - done.returncode


def cmd_argv(args: argparse.Namespace) -> ExitCode:
    from guard._sandbox import SpawnContext, spawn

    session, facts = _session(args, make_home=True)
    if session.state == "unavailable" and args.json:
        emit({"plan": session.model_dump(mode="json"), "argv": None, "command": None, **facts})
    # Unavailable: spawn raises SandboxUnavailableError, which exits 7 with the reason.
    context = spawn(session, SpawnContext(command=args.command, cwd=session.cwd, env={}))
    if args.json:
        argv = [*session.argv, args.command] if session.argv else None
        emit({"plan": session.model_dump(mode="json"), "argv": argv,
              "command": context.command, **facts})  # fmt: skip
    else:
        sys.stdout.write(context.command + "\n")
    return ExitCode.OK


def register(subparsers: Subparsers) -> None:
    """Add ``sandbox check``, ``sandbox run`` and ``sandbox argv``."""
    group = subparsers.add_parser("sandbox", help="the OS sandbox around the agent's commands")
    sub = group.add_subparsers(dest="sandbox_command", required=True, parser_class=Parser)

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--cwd", default=None, help="workspace (default: current directory)")
        parser.add_argument(
            "--shell", default="/bin/bash", help="the shell pi runs commands with (/bin/bash)"
        )

    check = sub.add_parser("check", help="can the sandbox start here; the effective settings")
    common(check)
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(func=cmd_check)

    run = sub.add_parser(
        "run", help="run one command the way the agent's bash is run (pi-guard sandbox run -- CMD)"
    )
    common(run)
    run.add_argument("words", nargs=argparse.REMAINDER, help="-- then the command")
    run.set_defaults(func=cmd_run)

    argv = sub.add_parser("argv", help="print the wrapped command pi's bash spawn hook returns")
    common(argv)
    argv.add_argument("--command", required=True, help="the agent's command line")
    argv.add_argument("--json", action="store_true", help="print the plan, argv and command")
    argv.set_defaults(func=cmd_argv)
