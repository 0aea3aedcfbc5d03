"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tools.pi.harness import ensure_pi

REPO = Path(__file__).resolve().parent.parent

# In CI the property tests explore a fixed set of examples, so a run is reproducible;
# on a developer's machine they keep exploring new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def pi_bin() -> Path:
    """The pinned pi, installed into the ignored .cache/pi on first use (file-locked)."""
    return ensure_pi(REPO)
