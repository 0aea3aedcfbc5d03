"""Every pi test gets its own pi agent dir and working directory: never the machine's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    monkeypatch.delenv("PI_OPERATOR_GUARD_HOME", raising=False)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    yield directory
    # guard._cli.main binds the logs to this test's captured stderr, closed after it.
    structlog.reset_defaults()
