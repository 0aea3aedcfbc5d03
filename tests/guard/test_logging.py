"""The guard's own logs go to stderr as it is when a line is written."""

from __future__ import annotations

import io
import sys

import pytest

from guard._logging import configure_logging, get_logger


def test_logs_follow_the_current_stderr_not_the_one_at_configure_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An earlier in-process serve() configured logging while stderr was a stream that is
    # closed now (pytest's capture of another test): logging must not write to it.
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("warning")
    first.close()
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    get_logger("guard.test").warning("still-logging", n=1)
    assert '"event": "still-logging"' in second.getvalue()


def test_every_line_names_its_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    configure_logging("info")
    get_logger("guard.sidecar").info("started", pid=1)
    get_logger("guard.sandbox").info("planned")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert '"logger": "guard.sidecar"' in lines[0] and '"logger": "guard.sandbox"' in lines[1]
