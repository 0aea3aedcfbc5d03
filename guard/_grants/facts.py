"""The facts of one tool call that a grant is derived from and matched on.

Contract: :func:`call_facts` gives the tool, program, fixed arguments and targets of a call
whose analysis is exactly one plain action, or the reason it is not (``not-single-action``,
``unresolved-part``). Plain means: for bash, one simple command whose words are all static
(no expansion, substitution, glob or brace), run directly (no wrapper, no ``cd``, no
redirection, no pipe, no inline code, no finding), with a bare program name, and the command
text is nothing but those words; for ``write``/``edit``, the one ``path``. Targets are the
classifier's (the verdict's ``targets``); every path the command names is pinned: targets
as absolute paths, other named paths as absolute fixed arguments; ``trailing`` says whether
the targets are the last words.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from guard._errors import BadInputError
from guard._evidence import normalize_path
from guard._policy import Command, Verdict, analyze, command_mentions, pi_file_target, realpath

__all__ = ["FILE_TOOLS", "SHELL_TOOL", "CallFacts", "Refusal", "anchor", "call_facts"]

SHELL_TOOL = "bash"
FILE_TOOLS = frozenset({"write", "edit"})

Refusal = Literal["not-single-action", "unresolved-part"]


@dataclass(frozen=True, slots=True)
class CallFacts:
    """One plain action: ``targets`` are absolute (not resolved); ``program`` bash only."""

    tool: str
    program: str | None
    fixed_args: tuple[str, ...]
    targets: tuple[str, ...]
    trailing: bool = True
    """The targets are the last words (no fixed argument after one): grants need this."""


def anchor(path: str) -> str:
    """``path`` with its directory resolved but not its last name (where a link itself lives)."""
    parent, name = os.path.split(path)
    if not name:
        return realpath(path)
    return os.path.join(realpath(parent or "/"), name)


def _normalize(text: str, cwd: str) -> str | None:
    try:
        return normalize_path(text, cwd)
    except BadInputError:
        return None


def call_facts(
    tool_name: str, tool_input: Mapping[str, Any], cwd: str, verdict: Verdict
) -> CallFacts | Refusal:
    """The facts of a call, or why it is not one plain action (see the module docstring)."""
    cwd_text = _normalize(cwd, os.getcwd())
    if cwd_text is None:
        return "unresolved-part"
    if tool_name in FILE_TOOLS:
        found = pi_file_target(tool_name, tool_input, cwd_text)
        if found is None:
            return "unresolved-part"
        path, real = found
        if not set(verdict.targets) <= {path, real}:
            return "unresolved-part"
        return CallFacts(tool_name, None, (), (path,))
    if tool_name != SHELL_TOOL:
        return "unresolved-part"
    text = tool_input.get("command")
    if not isinstance(text, str):
        return "unresolved-part"
    home = os.path.expanduser("~")
    script = analyze(text, cwd=cwd_text, home=home)
    if len(script.commands) != 1:
        return "not-single-action"
    command = script.commands[0]
    if script.findings or not _plain(command, text, cwd_text):
        return "unresolved-part"
    return _bash_facts(command, cwd_text, home, verdict)


def _plain(command: Command, text: str, cwd: str) -> bool:
    if (
        command.via
        or command.producers
        or command.stdin_texts
        or command.redirect_writes
        or command.redirect_reads
        or command.named
        or command.code_strings
        or command.stdin_file
        or command.cwd != cwd
        or not command.argv
    ):
        return False
    for word in command.argv:
        if word.value is None or word.glob or word.brace or word.inner:
            return False
        if not word.value.isprintable():
            return False
    head = command.argv[0].value or ""
    if "/" in head or head != command.program:
        return False
    # The command text is these words and nothing else: no wrapper (bash -c …), no
    # assignment, no comment, no separator the walk may have folded away.
    shape = r"\s*" + r"\s+".join(re.escape(w.raw) for w in command.argv) + r"\s*"
    return re.fullmatch(shape, text) is not None


def _beneath(path: str | None, parents: set[str]) -> bool:
    return path is not None and any(path.startswith(p.rstrip("/") + "/") for p in parents)


def _pinned_option(value: str, cwd: str) -> str:
    """``--opt=VALUE`` with VALUE absolute when it names a file that is there
    (``chmod --reference=c.md``), else the option as written."""
    name, equals, rest = value.partition("=")
    if not equals or not rest or not name.startswith("--"):
        return value
    path = _normalize(rest, cwd)
    return f"{name}={path}" if path is not None and os.path.lexists(path) else value


def _bash_facts(command: Command, cwd: str, home: str, verdict: Verdict) -> CallFacts | Refusal:
    mentions = command_mentions(command, _normalize, home)
    if any(m.path is None or m.pattern is not None for m in mentions):
        return "unresolved-part"
    listed = set(verdict.targets)
    named = {m.path for m in mentions if m.path is not None}
    fixed: list[str] = []
    targets: list[str] = []
    options = True
    trailing = True
    for word in command.args:
        value = word.value or ""
        option = options and value.startswith("-") and value != "-"
        if options and value == "--":
            options = False
        path = _normalize(value, cwd) if value and not option else None
        if path is not None and path in listed:
            targets.append(path)
            continue
        trailing = trailing and not targets
        if path is not None and (path in named or os.path.lexists(path)):
            # A path the command reads, or a word naming a file that is there (an operand
            # the analysis has no row for): pinned, so from another directory it is another
            # argument, never another file under the same name.
            fixed.append(path)
        else:
            fixed.append(_pinned_option(value, cwd) if option else value)
    chosen = set(targets)
    pinned = chosen | set(fixed)
    # What a copy or move writes beneath its destination (``mv a b/``: ``b/a``) is named by
    # the destination, an argument.
    beneath = {m.path for m in mentions if not m.target and _beneath(m.path, chosen)}
    if any(m.path not in (chosen if m.target else pinned | beneath) for m in mentions):
        return "unresolved-part"
    if not listed <= chosen | {realpath(t) for t in chosen}:
        return "unresolved-part"
    return CallFacts(SHELL_TOOL, command.program, tuple(fixed), tuple(targets), trailing)
