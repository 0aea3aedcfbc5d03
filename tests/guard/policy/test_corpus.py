"""The labeled corpus: every destructive command is caught, few safe ones are flagged."""

from __future__ import annotations

from collections.abc import Callable

from guard._policy import Verdict
from tests.guard.policy.corpus import BLOCKED, DESTRUCTIVE, SAFE
from tests.guard.policy.corpus_evasion import EVASION, GUARD_SELF

FP_BOUND = 0.02
"""The documented bound (docs/performance.md): at most 2 % of the safe corpus asks."""


def test_corpus_is_big_enough() -> None:
    assert len(BLOCKED) + len(DESTRUCTIVE) >= 200
    assert len(SAFE) >= 300
    evasion = [c for commands in EVASION.values() for c in commands]
    assert not set(SAFE) & {*evasion, *GUARD_SELF}, "a command is both safe and an evasion"
    everything = [*BLOCKED, *DESTRUCTIVE, *SAFE]
    assert len(set(everything)) == len(everything), "duplicates in the corpus"


def test_recall_and_false_positive_rate(bash: Callable[[str], Verdict]) -> None:
    missed = [c for c in (*BLOCKED, *DESTRUCTIVE) if bash(c).verdict == "allow"]
    not_blocked = [c for c in BLOCKED if bash(c).verdict != "block"]
    flagged = {c: bash(c) for c in SAFE}
    false_positives = {c: v.rule_ids for c, v in flagged.items() if v.verdict != "allow"}
    for command, ids in false_positives.items():
        print(f"  asks: {command!r} {ids}")

    destructive_total = len(BLOCKED) + len(DESTRUCTIVE)
    recall = 1 - len(missed) / destructive_total
    fp_rate = len(false_positives) / len(SAFE)
    print(
        f"\npolicy corpus: recall {recall:.1%} ({destructive_total - len(missed)}/"
        f"{destructive_total}), false positives {fp_rate:.1%} "
        f"({len(false_positives)}/{len(SAFE)})"
    )
    assert missed == []
    assert not_blocked == []
    # docs/performance.md reports the rate; the guide's bound is 5 %.
    assert fp_rate <= FP_BOUND, false_positives


def test_safe_commands_are_local_safe_without_rule_ids(bash: Callable[[str], Verdict]) -> None:
    verdict = bash("git status && pytest -x")
    assert verdict.verdict == "allow"
    assert verdict.action_kind == "local-safe"
    assert verdict.rule_ids == ()
    assert verdict.path is None
