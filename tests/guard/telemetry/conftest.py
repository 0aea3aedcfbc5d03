from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.wire import AuditRecord
from guard import Guard


class Observed:
    """A real guard home whose durable records are collected as the sidecar's export sees
    them."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self.records: list[AuditRecord] = []
        guard.observer = self.records.append

    def log_text(self) -> str:
        return self.guard.audit.path.read_text(encoding="utf-8")


@pytest.fixture
def observed(tmp_path: Path) -> Iterator[Observed]:
    guard = Guard.open(tmp_path / "home")
    try:
        yield Observed(guard)
    finally:
        guard.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root
