"""The policy: layered rules (built-in < user < project, strictest wins) applied to tool calls.

:class:`Policy` ties the parts together: :mod:`._layering` loads and merges the layers,
:mod:`._classify` gives the verdict of a tool call, :meth:`Policy.describe` shows the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from audit.wire import canonical_json, sha256_prefixed
from guard._policy.layering import CONFIG_FILE_NAME, MergedLayers, load_layers
from guard._policy.matching.checks import CHECKS
from guard._policy.matching.classify import Classifier
from guard._policy.matching.tools import McpTrust, ToolFacts
from guard._policy.settings.models import (
    ApprovalSettings,
    ConfigProblem,
    DescribedCheck,
    DescribedRule,
    EvidenceSettings,
    GrantSettings,
    PolicyDescription,
    Rule,
    Verdict,
)

__all__ = ["CHECKS", "CONFIG_FILE_NAME", "Policy"]

_PRECEDENCE = (
    "built-in < user (<home>/operator-guard.toml) < project (<project>/.pi/operator-guard.toml); "
    "strictest wins (block > confirm > allow). The project layer can only add restrictions: the "
    "model can write the project directory, so a relaxing project rule or setting is reported and "
    "ignored. Only the user's layer may relax a built-in confirm rule, with an allow rule naming "
    "it in 'relaxes'; block rules are never relaxed."
)


_HOMES = "GUARD_HOMES"  # the other guard homes noted on this machine
_HOMES_RULE = "builtin.guard-homes"


class Policy:
    """The effective policy of one guard home and (optionally) one project.

    Build it with :meth:`load`; it never raises on bad config files, it records
    :attr:`problems` and keeps what is valid. :meth:`classify` is pure apart from
    reading the file system for symlinks and globs.
    """

    def __init__(self, merged: MergedLayers) -> None:
        self._rules = tuple(merged.rules)
        self._exceptions = tuple(merged.exceptions)
        self._problems = tuple(merged.problems)
        self._ignored = tuple(merged.ignored)
        self._layers = merged.layers
        self._settings = merged.settings
        self._settings_from = merged.settings_from
        self._placeholders = merged.placeholders
        self._placeholder_lists = merged.placeholder_lists
        self._grants = merged.grants
        self._approvals = merged.approvals
        self._evidence = merged.evidence
        self._classifier = Classifier(
            rules=self._rules,
            exceptions=self._exceptions,
            settings=merged.settings,
            problem_count=len(self._problems),
            writable=merged.sandbox.writable,
            mcp=merged.mcp,
        )
        self._mcp = merged.mcp

    @classmethod
    def load(cls, home: Path, project: Path | None) -> Policy:
        """Built-in < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``.

        Never raises on a bad config file: :attr:`problems` records it.
        """
        return cls(load_layers(home, project))

    @property
    def problems(self) -> tuple[ConfigProblem, ...]:
        """Config problems found while loading (invalid files, ignored relaxations)."""
        return self._problems

    @property
    def approvals(self) -> ApprovalSettings:
        """The approval port's settings (``[approvals]``, the user's file only)."""
        return self._approvals

    @property
    def evidence(self) -> EvidenceSettings:
        """What consumers require of evidence (``[evidence]``, the user's file only)."""
        return self._evidence

    @property
    def grants(self) -> GrantSettings:
        """The limits of scoped grants in force (``[grants]``: the user's file sets them, a
        project file can only lower them or switch grants off)."""
        return self._grants

    @property
    def mcp(self) -> McpTrust:
        """Whose MCP hints count, and which servers pi's ``mcp.json`` files define."""
        return self._mcp

    def classify(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: Path,
        facts: ToolFacts | None = None,
    ) -> Verdict:
        """The verdict for one pending tool call (strictest matching rule wins); ``facts``:
        what pi says of the tool (they decide only whether an unknown tool asks)."""
        return self._classifier.classify(tool_name, tool_input, cwd, facts)

    def protects_write(
        self,
        path: str,
        cwd: Path,
        *,
        ignore: frozenset[str] = frozenset(),
        blocked_only: bool = False,
    ) -> bool:
        """Whether writing ``path`` (absolute) is asked or blocked by a rule not in ``ignore``
        (``blocked_only``: only whether it is blocked)."""
        if not self._classifier.may_protect(path):
            return False
        verdict = self.classify("write", {"path": path, "content": ""}, cwd)
        wanted = ("block",) if blocked_only else ("block", "confirm")
        return verdict.verdict in wanted and bool(set(verdict.rule_ids) - ignore)

    def describe(self) -> dict[str, Any]:
        """The effective merged policy with the layer of every rule, for ``policy show``."""
        rules = [
            DescribedRule(
                id=r.rule.id,
                layer=r.layer,
                verdict=r.rule.verdict,
                kind=r.rule.effective_kind,
                reason=r.rule.reason,
                match=_match_fields(r.rule),
            )
            for r in (*self._rules, *self._exceptions)
        ]
        checks = [
            DescribedCheck(id=check_id, verdict=v, kind=k, reason=reason)
            for check_id, (v, k, reason) in CHECKS.items()
        ]
        settings: dict[str, bool | list[str]] = {
            "resolveSymlinks": bool(self._settings.resolve_symlinks),
            "caseSensitivePaths": bool(self._settings.case_sensitive_paths),
            "shellTools": list(self._settings.shell_tools or ()),
        }
        description = PolicyDescription(
            precedence=_PRECEDENCE,
            layers=self._layers,
            placeholders=dict(self._placeholders),
            placeholder_lists=dict(self._placeholder_lists),
            settings=settings,
            settings_from={to_camel(k): v for k, v in self._settings_from.items()},
            grants=self._grants,
            rules=tuple(rules),
            checks=tuple(checks),
            ignored=self._ignored,
            problems=tuple(str(p) for p in self._problems),
        )
        return description.model_dump(mode="json")

    def digest(self) -> str:
        """The SHA-256 of :meth:`describe` (RFC 8785 JSON) that grants and ``session.started``
        bind to, without the machine's state: the other guard homes noted on this machine
        come and go with other sessions and tests, and one opened elsewhere must not void
        this session's grants (their paths stay protected; only the digest leaves them out)."""
        described = self.describe()
        described["placeholderLists"].pop(_HOMES, None)
        # The built-in rule over them spells the list out (or is left out while it is empty).
        described["rules"] = [r for r in described["rules"] if r["id"] != _HOMES_RULE]
        return sha256_prefixed(canonical_json(described))


def _match_fields(rule: Rule) -> dict[str, list[str] | str]:
    data = rule.model_dump(
        mode="json",
        by_alias=True,
        exclude_defaults=True,
        exclude={"id", "verdict", "kind", "reason"},
    )
    out: dict[str, list[str] | str] = {}
    for key, value in data.items():
        if isinstance(value, list):
            out[key] = [str(v) for v in value]
        elif value is not None:
            out[key] = str(value)
    if rule.family == "paths" and "access" not in out:
        out["access"] = list(rule.access)
    return out
