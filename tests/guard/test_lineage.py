"""Which process the sidecar serves: its parent when started cold, pi (noted by the warm
start's fork server) when forked."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from guard._policy.settings import lineage as _lineage


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    saved = list(_lineage._pi)
    yield
    _lineage._pi[:] = saved


def test_a_cold_sidecar_serves_its_parent() -> None:
    _lineage._pi.clear()
    assert _lineage.pi_pid() == os.getppid()


def test_a_forked_sidecar_serves_the_pi_it_was_forked_for() -> None:
    _lineage.serve_for(4242)
    assert _lineage.pi_pid() == 4242
    _lineage.serve_for(4343)  # noted once per process; the last word counts
    assert _lineage.pi_pid() == 4343
