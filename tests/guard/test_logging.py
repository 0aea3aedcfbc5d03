"""The guard's own logs go to stderr as it is when a line is written."""

from __future__ import annotations

import io
import json
import subprocess
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


def test_deferred_logging_imports_structlog_only_for_a_line_it_writes() -> None:
    # The sidecar defers its logging (structlog and its asyncio cost every session's start):
    # a line below the level is dropped without them; the first line at the level brings
    # them in, configured as configure_logging would have.
    child = (
        "import sys\n"
        "from guard._logging import defer_logging, get_logger, logging_configured\n"
        "defer_logging('warning')\n"
        "assert logging_configured()\n"
        "get_logger('guard.quiet').info('below-the-level', n=1)\n"
        "print('structlog' in sys.modules, 'asyncio' in sys.modules)\n"
        "get_logger('guard.loud').warning('at-the-level', n=2)\n"
        "print('structlog' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", child], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False", "True"]
    (line,) = done.stderr.splitlines()
    record = json.loads(line)
    assert record["event"] == "at-the-level" and record["n"] == 2
    assert record["logger"] == "guard.loud" and record["level"] == "warning"
