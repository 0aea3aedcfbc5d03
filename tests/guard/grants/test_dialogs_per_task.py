"""``make bench``'s dialogs per task, kept true: the bench's scripted task through the sidecar,
without grants and with the broadest grant accepted once per kind of call. At least 60 %
fewer dialogs, and every near miss still asked (or blocked), never covered. No sandbox
needed: without bubblewrap the session's plan is ``unavailable`` and grants work the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.session.bench_dialogs import GOAL_REDUCTION, WORKLOAD, measure

pytestmark = pytest.mark.integration


def test_grants_cut_a_tasks_dialogs_and_cover_no_near_miss(tmp_path: Path) -> None:
    result = measure(tmp_path)
    without, accepted = result["withoutGrants"], result["withGrants"]
    assert result["calls"] == len(WORKLOAD) >= 30
    assert result["nearMisses"] >= 6
    # Without grants every call of the task is a dialog, except what the policy blocks.
    assert without["dialogs"] == len(WORKLOAD) - without["blocked"]
    # With grants: one dialog per kind of call (clean-up, write, edit), and one for each other
    # protected file (.env.local.example, .env.test.example): a protected file's grant is
    # the exact file, never a glob beside it.
    assert accepted["dialogsForTheTasksOwnCalls"] == 5
    assert len(accepted["grantsAccepted"]) == 3
    assert result["reduction"] >= GOAL_REDUCTION
    assert result["goalReduction60"] and result["goalNoNearMissCovered"]
    assert result["nearMissesCovered"] == 0
    for near in result["nearMissOutcomes"]:
        assert near["withGrants"] == near["withoutGrants"] in ("asked", "blocked"), near
    assert accepted["guardSessionCounts"]["covered"] == accepted["covered"] > 0
