"""The fault-injection soak through the real sidecar process (see ``tests/soak/soak.py``).

``make test`` runs a short soak (a few hundred confirmations, every fault kind at least
once); ``make soak`` runs the long one by setting ``PI_OPERATOR_GUARD_SOAK_CONFIRMATIONS=10000``.
The seed is fixed so a failure reproduces; ``PI_OPERATOR_GUARD_SOAK_SEED`` picks another plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.soak.soak import FAULTS, Driver, check

CONFIRMATIONS = int(os.environ.get("PI_OPERATOR_GUARD_SOAK_CONFIRMATIONS", "250"))
SEED = int(os.environ.get("PI_OPERATOR_GUARD_SOAK_SEED", "20261122"))


@pytest.mark.slow
def test_confirmations_through_a_sidecar_that_is_killed_starved_locked_and_time_shifted(
    tmp_path: Path,
) -> None:
    driver = Driver(tmp_path, SEED)
    try:
        seen = driver.run(CONFIRMATIONS)
    finally:
        driver.close()
    summary = check(tmp_path, seen)
    assert set(summary["faults"]) == set(FAULTS)
    assert summary["confirmations"] == CONFIRMATIONS
    assert summary["consumed"] > 0
    # What a user would run afterwards agrees, and speaks in one line, not a traceback.
    done = subprocess.run(
        [sys.executable, "-m", "guard", "--home", str(tmp_path / "home"), "audit", "verify"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    print("soak:", json.dumps(summary, sort_keys=True))
