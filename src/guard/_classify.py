"""Minimal built-in classification (issue 2); replaced by the policy engine."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from guard._fingerprint import WIRE_CONFIG, normalize_path

__all__ = ["Verdict", "classify"]


class Verdict(BaseModel):
    model_config = WIRE_CONFIG

    verdict: Literal["allow", "confirm", "block"]
    action_kind: Literal["local-safe", "destructive", "protected"]
    rule_ids: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    path: str | None = None


_DESTRUCTIVE = (
    ("bash.rm-recursive-or-force", re.compile(r"(^|[;&|(\s])rm\s+(-\S*[rRf]|--recursive|--force)")),
    ("bash.git-reset-hard", re.compile(r"\bgit\s+reset\s+.*--hard")),
    ("bash.git-clean", re.compile(r"\bgit\s+clean\b")),
    ("bash.git-push-force", re.compile(r"\bgit\s+push\b.*(\s-f\b|--force)")),
)


def classify(tool_name: str, tool_input: Mapping[str, Any], cwd: Path, home: Path) -> Verdict:
    if tool_name == "bash":
        command = tool_input.get("command")
        if isinstance(command, str):
            hits = [rule for rule, rx in _DESTRUCTIVE if rx.search(command)]
            if hits:
                return Verdict(
                    verdict="confirm",
                    action_kind="destructive",
                    rule_ids=tuple(hits),
                    reasons=("destructive shell command",),
                )
        return Verdict(verdict="allow", action_kind="local-safe")
    if tool_name in ("write", "edit"):
        raw = tool_input.get("path")
        if isinstance(raw, str) and raw:
            path = normalize_path(raw, cwd)
            name = path.rsplit("/", 1)[-1]
            home_text = normalize_path(str(home), "/")
            rules: list[str] = []
            if name.startswith(".env"):
                rules.append("path.dotenv")
            if "/.git/" in path + "/":
                rules.append("path.git-internals")
            if path == home_text or path.startswith(home_text + "/"):
                rules.append("path.guard-home")
            if rules:
                return Verdict(
                    verdict="confirm",
                    action_kind="protected",
                    rule_ids=tuple(rules),
                    reasons=("write to a protected path",),
                    targets=(path,),
                    path=path,
                )
            return Verdict(verdict="allow", action_kind="local-safe", path=path)
    return Verdict(verdict="allow", action_kind="local-safe")
