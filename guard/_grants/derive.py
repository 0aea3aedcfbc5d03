"""Which grants the dialog may offer for one asked call: zero, one or two, narrowest first.

Contract: :func:`offers` derives every pattern from the guard's own analysis
(:mod:`guard._grants.facts`), never from text the model wrote. It offers nothing for a
verdict other than ``confirm``, for a call the guard's self-protection, runs-outside-sandbox
or credential rules (or any built-in check) asked about, for a call that is not one plain
action with its targets last, or for a target outside the workspace. The offers are
"same-call" (the targets themselves) and, when every target sits in one directory that is
neither ``/``, the home, nor a parent of the guard's home, "same-directory" (``<dir>/*``
plus the extension all targets share) — never for a protected file or a dot-named one (a
secret's place: ``.env``), a recursive action or a directory target, which get the exact
targets only: a grant never covers a path the call did not name beyond its files' siblings.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from audit.wire import ActionKind
from guard._grants.facts import CallFacts, anchor, call_facts
from guard._grants.model import GLOB_SPECIALS, Breadth, GrantOffer, GrantPattern, inside
from guard._home import default_home
from guard._policy import CHECKS, Verdict, realpath

__all__ = ["NEVER_GRANTED", "offers"]

NEVER_GRANTED = frozenset(
    {
        # the guard's own surface
        "builtin.guard-home",
        "builtin.guard-anchor",
        "builtin.guard-cli",
        "builtin.guard-install",
        "builtin.guard-installation",
        "builtin.guard-config",
        "builtin.kill-by-name",
        "builtin.pi-extensions",
        # what runs outside the sandbox
        "builtin.runs-outside-sandbox",
        "builtin.shell-startup",
        # credentials
        "builtin.ssh",
        "builtin.cloud-credentials",
        "builtin.credentials",
        "builtin.key-files",
        "builtin.pi-auth",
        # every built-in check: unresolved, self, catastrophic, outside the workspace …
        *CHECKS,
    }
)
"""Rule ids that never get a grant: each call they ask about is asked every time."""

_PLAIN = re.compile(r"[\w@%+=:,./*?~-]+")


def offers(
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
    verdict: Verdict,
    *,
    workspace: str | os.PathLike[str],
) -> tuple[GrantOffer, ...]:
    """The grants to offer for this asked call (0–2): same call, then same directory."""
    if verdict.verdict != "confirm" or verdict.action_kind == "local-safe":
        return ()
    rule_ids = tuple(sorted(set(verdict.rule_ids)))
    if not rule_ids or NEVER_GRANTED.intersection(rule_ids):
        return ()
    facts = call_facts(tool_name, tool_input, os.fspath(cwd), verdict)
    if isinstance(facts, str) or not facts.targets or not facts.trailing:
        return ()
    if any(not part.isprintable() for part in (*facts.fixed_args, *facts.targets)):
        return ()
    scope = realpath(os.path.abspath(os.fspath(workspace)))
    if scope == "/":
        return ()
    places = [p for t in facts.targets for p in (anchor(t), realpath(t))]
    if any(not inside(p, scope) or GLOB_SPECIALS.intersection(p) for p in places):
        return ()

    kind: ActionKind = "destructive" if verdict.action_kind == "destructive" else "protected"

    def offer(globs: Iterable[str], breadth: Breadth, label: str) -> GrantOffer:
        pattern = GrantPattern(
            tool=facts.tool,
            kind=kind,
            program=facts.program,
            fixed_args=facts.fixed_args,
            globs=tuple(sorted(set(globs))),
            scope=scope,
            rule_ids=rule_ids,
        )
        return GrantOffer(pattern=pattern, breadth=breadth, label=label)

    action = _action(facts)
    shown = ", ".join(_show(t) for t in dict.fromkeys(facts.targets))
    found = [offer(places, "same-call", f"{action} of exactly {shown}")]
    glob = None if _exact_only(facts, kind) else _directory_glob(places, scope)
    if glob is not None:
        found.append(offer((glob,), "same-directory", f"{action} of files matching {_show(glob)}"))
    return tuple(found)


def _exact_only(facts: CallFacts, kind: ActionKind) -> bool:
    """Whether only the exact targets may be granted: a protected file or a secret (``.env``
    never widens to ``./*``), a recursive action or a directory target (a glob beside
    ``node_modules`` would cover ``src``)."""
    if kind != "destructive":
        return True
    for arg in facts.fixed_args:
        if arg == "--recursive" or (
            arg.startswith("-") and not arg.startswith("--") and ("r" in arg or "R" in arg)
        ):
            return True
    return any(os.path.isdir(t) or _dotted(t) for t in facts.targets)


def _dotted(target: str) -> bool:
    """A dot-named target (``.env``, ``.npmrc``): secrets and settings live under such names."""
    return os.path.basename(target.rstrip("/")).startswith(".")


def _directory_glob(places: list[str], scope: str) -> str | None:
    directories = {os.path.dirname(p) for p in places}
    if len(directories) != 1:
        return None
    (directory,) = directories
    home = realpath(os.path.expanduser("~"))
    guard_home = realpath(os.path.abspath(default_home()))
    if directory in ("/", home) or not inside(directory, scope) or inside(guard_home, directory):
        return None
    extensions = {os.path.splitext(os.path.basename(p))[1] for p in places}
    extension = extensions.pop() if len(extensions) == 1 else ""
    return f"{directory}/*{extension}"


def _action(facts: CallFacts) -> str:
    words = [facts.program or facts.tool, *facts.fixed_args]
    return " ".join(_show(w) for w in words)


def _show(text: str) -> str:
    return text if _PLAIN.fullmatch(text) else shlex.quote(text)
