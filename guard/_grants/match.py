"""Whether a later call is covered by a grant's pattern: matching on facts, not on text.

Contract: :func:`covers` says ``covered`` only when the call's analysis is exactly one plain
action (:mod:`guard._grants.facts`) of the pattern's tool, action kind, program and fixed
arguments (the same sequence, all before the targets), the policy asked about it with
exactly the pattern's rule ids (verdict ``confirm``: a grant never turns a ``block`` into
anything), and every target, both
where it lives (its directory resolved) and what it resolves to (``os.path.realpath``), is
inside the pattern's scope and matches one of its globs. Otherwise the :class:`Coverage`
names the first fact that differs. Time, uses and session are checked by the store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from guard._grants.facts import CallFacts, Refusal, anchor, call_facts
from guard._grants.model import Coverage, CoverageReason, GrantPattern, glob_matches, inside
from guard._policy import Verdict, realpath

__all__ = ["covers"]


def _no(reason: CoverageReason, detail: str = "") -> Coverage:
    return Coverage(reason=reason, detail=detail)


def covers(
    pattern: GrantPattern,
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
    verdict: Verdict,
    *,
    facts: CallFacts | Refusal | None = None,
) -> Coverage:
    """Whether ``pattern`` covers this call (``verdict`` is the policy's verdict for it);
    ``facts``: the call's :func:`guard._grants.facts.call_facts`, when the caller has already
    made them from this call and this verdict (one analysis for every grant it tries)."""
    if verdict.verdict == "block":
        return _no("blocked")
    if tool_name != pattern.tool:
        return _no("other-tool", tool_name)
    if facts is None:
        facts = call_facts(tool_name, tool_input, os.fspath(cwd), verdict)
    if isinstance(facts, str):
        return _no(facts)
    if verdict.verdict != "confirm":
        return _no("not-asked")
    if verdict.action_kind != pattern.kind:
        return _no("other-kind", verdict.action_kind)
    if facts.program != pattern.program:
        return _no("other-program", facts.program or "")
    if facts.fixed_args != pattern.fixed_args or not facts.targets or not facts.trailing:
        return _no("other-arguments", " ".join(facts.fixed_args))
    if tuple(sorted(set(verdict.rule_ids))) != pattern.rule_ids:
        return _no("other-rules", ", ".join(verdict.rule_ids))
    for target in facts.targets:
        places = (anchor(target), realpath(target))
        for place in places:
            if not inside(place, pattern.scope):
                return _no("target-outside-scope", place)
        for place in places:
            if not any(glob_matches(glob, place) for glob in pattern.globs):
                return _no("target-outside-glob", place)
    return Coverage(reason="covered")
