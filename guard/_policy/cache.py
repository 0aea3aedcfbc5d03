"""Which policy applies to a call (the pending fingerprint is computed from its verdict by
``guard._facade.consumer.classify_call``).

The policy of a workspace is the built-in rules, the user's
``<home>/operator-guard.toml`` and the project's ``<cwd>/.pi/operator-guard.toml``.
Loading costs milliseconds, so loaded policies are cached per workspace and
reloaded as soon as either config file changes (size, mtime or existence), or the pi
extension reports where pi runs from.
Record, consume and the verify-only monitor all classify through here, so a
confirmation and its consumption see the same rules.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from guard._home import pi_agent_dir
from guard._policy import Policy, Verdict
from guard._policy.matching.tools import ToolFacts
from guard._policy.settings.surroundings import runtime_stamp

__all__ = ["OVERWRITE_RULE", "OverwritesWork", "PolicyCache"]

OverwritesWork = Callable[[str], str | None]
"""What an overwrite of this absolute path would lose of the operator's work (``untracked``,
``uncommitted``, ``unexamined``), or None: nothing the operator had."""

_USER_CONFIG = "operator-guard.toml"
_PROJECT_CONFIG = Path(".pi") / "operator-guard.toml"
_MAX_CACHED = 64

_MCP_FILES = ("mcp.json", Path(".pi") / "mcp.json")  # pi's user and project MCP servers
_SETTINGS_FILES = ("settings.json", Path(".pi") / "settings.json")  # pi's, user and project
_MAX_FACTS = 4096
OVERWRITE_RULE = "builtin.overwrite-work"
_OVERWRITING = frozenset({"write", "edit"})

_FileStamp = tuple[int, int] | None
Stamp = tuple[tuple[_FileStamp, ...], tuple[tuple[str, ...], ...]]


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


class PolicyCache:
    """Policy lookup for one guard home, cached per workspace."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._cache: dict[str, tuple[Stamp, Policy]] = {}
        self._facts: dict[str, ToolFacts] = {}
        self.overwrites: OverwritesWork | None = None
        """Set by whoever keeps the operator's baseline (the sidecar, with the effects
        review): pi's ``write``/``edit`` of a file that held work then asks."""

    def learn(self, facts: ToolFacts) -> None:
        """Remember what pi says of a tool of this session (the shim tells it with a call);
        every later classification of that tool's calls uses it."""
        if facts.name not in self._facts and len(self._facts) >= _MAX_FACTS:
            self._facts.pop(next(iter(self._facts)))
        self._facts[facts.name] = facts

    def facts(self, tool_name: str) -> ToolFacts | None:
        """What pi said of ``tool_name`` in this session, if it said anything."""
        return self._facts.get(tool_name)

    def policy_for(self, cwd: str | os.PathLike[str]) -> Policy:
        workspace = Path(cwd)
        files = (
            _stat(self.home / _USER_CONFIG),
            _stat(workspace / _PROJECT_CONFIG),
            _stat(pi_agent_dir() / _MCP_FILES[0]),
            _stat(workspace / _MCP_FILES[1]),
            _stat(workspace / ".git" / "config"),  # core.hooksPath: the work tree's hooks
            # what pi's settings name for it to load (a new entry is protected at once)
            _stat(pi_agent_dir() / _SETTINGS_FILES[0]),
            _stat(workspace / _SETTINGS_FILES[1]),
        )
        stamp = (files, runtime_stamp())
        key = os.fspath(workspace)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        policy = Policy.load(self.home, workspace)
        if len(self._cache) >= _MAX_CACHED:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = (stamp, policy)
        return policy

    def classify(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
    ) -> tuple[Verdict, Policy]:
        policy = self.policy_for(cwd)
        facts = self._facts.get(tool_name)
        verdict = policy.classify(tool_name, tool_input, Path(cwd), facts)
        return self._overwriting(tool_name, verdict), policy

    def _overwriting(self, tool_name: str, verdict: Verdict) -> Verdict:
        """An allowed ``write``/``edit`` of a file that held the operator's work asks, as
        the same change through bash is held by the effects review."""
        judge = self.overwrites
        if judge is None or tool_name not in _OVERWRITING or verdict.verdict != "allow":
            return verdict
        lost = judge(verdict.path) if verdict.path is not None else None
        if lost is None:
            return verdict
        return Verdict(
            verdict="confirm",
            action_kind="destructive",
            rule_ids=(OVERWRITE_RULE,),
            reasons=(
                f"overwrites a file the operator had, which no git repository can bring back: "
                f"{verdict.path}"
                if lost == "not-in-git"
                else f"overwrites the operator's {lost} work: {verdict.path}",
            ),
            targets=verdict.targets,
            path=verdict.path,
        )
