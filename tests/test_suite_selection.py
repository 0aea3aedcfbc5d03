"""The suite's own selection: which end-to-end tests and variants run on which pinned pi."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import dealt
from tools.pi.harness import FLAVORS, NEWEST

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent


def collected(*paths: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_newest_pi_runs_every_test_and_the_older_ones_the_contract() -> None:
    ids = collected(
        "tests/e2e/test_damaged_log_e2e.py",
        "tests/e2e/test_effects_e2e.py",
        "tests/e2e/test_stop_e2e.py",
    )
    by_flavor: Counter[tuple[str, str]] = Counter()
    for nodeid in ids:
        match = re.search(r"::(\w+)\[(legacy|current)-[^-\]]+(?:-|\])", nodeid)
        assert match is not None, nodeid
        by_flavor[(match.group(1), match.group(2))] += 1
    damaged = "test_a_log_damaged_in_the_middle_blocks_until_recovered"
    spellings = "test_each_spelling_deletes_nothing_without_the_operator"
    contract = "test_with_apply_the_change_lands_exactly_and_evidence_is_minted"
    contract_variants = "test_no_and_stop_records_every_call_of_the_turn_as_stopped"
    older = [f for f in FLAVORS if f != NEWEST]
    assert older
    assert by_flavor[(damaged, NEWEST)] == 1
    assert by_flavor[(spellings, NEWEST)] == 2
    assert by_flavor[(contract, NEWEST)] == 1
    assert by_flavor[(contract_variants, NEWEST)] == 3
    for flavor in older:
        # Not marked every_pi: the older pi runs none of it, whatever its variants.
        assert by_flavor[(damaged, flavor)] == 0
        assert by_flavor[(spellings, flavor)] == 0
        # every_pi: the older pi runs it, and only the first of variants_on_newest_pi's.
        assert by_flavor[(contract, flavor)] == 1
        assert by_flavor[(contract_variants, flavor)] == 1


def test_the_longest_tests_are_dealt_so_every_worker_starts_on_its_share() -> None:
    ordered = ["e1", "e2", "e3", "e4", "e5", "s1", "s2", "t1", "t2", "t3", "t4", "t5"]
    hands = dealt(ordered, 4)
    assert sorted(hands) == sorted(ordered)
    quarters = [hands[i : i + 3] for i in range(0, 12, 3)]
    assert [q[0] for q in quarters] == ["e1", "e2", "e3", "e4"]
    assert dealt(ordered, 1) == ordered


def test_under_xdist_each_workers_share_begins_with_real_pi_tests() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests/e2e/test_pi_guard.py", "tests/test_docs.py"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "PYTEST_XDIST_WORKER_COUNT": "4"},
    )  # fmt: skip
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    share = -(-len(ids) // 4)
    for start in range(0, len(ids), share):
        assert ids[start].startswith("tests/e2e/"), ids[start : start + share]
