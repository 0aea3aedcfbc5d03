"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tools.pi.harness import FLAVORS, PINNED, Flavor, PinnedPi, ensure_pi

REPO = Path(__file__).resolve().parent.parent

# In CI the property tests explore a fixed set of examples, so a run is reproducible;
# on a developer's machine they keep exploring new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session", params=FLAVORS, ids=[f"{f}-{PINNED[f][1]}" for f in FLAVORS])
def pinned_pi(request: pytest.FixtureRequest) -> PinnedPi:
    """Each pinned pi in turn (legacy, current): a test that uses it runs once per version.

    Installed into the ignored ``.cache/pi-<flavor>`` on first use (file-locked), with Node 22
    into ``.cache/node`` when the machine's node is too old for it.
    """
    flavor: Flavor = request.param
    return ensure_pi(REPO, flavor)


@pytest.fixture(scope="session")
def bwrap_required() -> None:
    """bubblewrap is a requirement (README): without it the sandbox tests fail, never skip."""
    from guard._sandbox import probe
    from guard._sandbox.collect import find_bwrap

    found = probe(find_bwrap())
    if not found.ok:
        pytest.fail(
            f"bubblewrap cannot start a sandbox here ({found.status}): install it "
            "(apt-get install bubblewrap) — it is a requirement of the guard and its tests"
        )
