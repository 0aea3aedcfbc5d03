"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard._pi_demo import ensure_pi

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def pi_bin() -> Path:
    """The pinned pi, installed into the ignored .cache/pi on first use (file-locked)."""
    return ensure_pi(REPO)
