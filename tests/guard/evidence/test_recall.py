"""The recall answers from its per-process index exactly as the backward scan of the log does.

The index (``guard._evidence.recall``) keeps each checked line's ``ts`` and the ids consumed;
these tests compare its answer with the plain scan on the same log for ids consumed and not,
windows that end inside the index and before it, and after the log was replaced, and check
that a guard kept open still refuses a replay after its ledger was edited under it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import parse_iso
from guard import Guard
from guard._evidence import recall
from guard._facade.guard import AUDIT_LOG_FILE, LEDGER_FILE

CALL = {"command": "rm -rf build"}


def _envelopes(g: Guard, project: Path, count: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(count):
        rec = g.record("bash", CALL, project, confirmed=True)
        assert rec.envelope is not None
        out.append(rec.envelope.model_dump(mode="json"))
    return out


def _scan(log: Path, env: dict[str, Any], margin: timedelta) -> object:
    """The backward scan alone, over the whole log: what the index must agree with."""
    eid = env["details"]["evidenceId"]
    since = parse_iso(env["details"]["createdAtIso"], "createdAtIso") - margin
    fd = os.open(log, os.O_RDONLY)
    try:
        return recall._scan_backward(fd, os.fstat(fd).st_size, eid, since, log)
    finally:
        os.close(fd)


@pytest.mark.parametrize("margin", [timedelta(seconds=60), timedelta(0), timedelta(seconds=-1)])
def test_index_agrees_with_the_scan(tmp_path: Path, margin: timedelta) -> None:
    home, project = tmp_path / "guard", tmp_path / "project"
    project.mkdir()
    with Guard.open(home) as g:
        envs = _envelopes(g, project, 12)
        for env in envs[::2]:
            assert g.consume(env, "bash", CALL, project).decision == "consumed"
        log = g.audit.path
        for env in envs:
            expected = _scan(log, env, margin)
            found = recall.recall_consumed(g.ledger, log, env, margin=margin)
            assert found == (expected is not False), env["details"]["evidenceId"]
        more = _envelopes(g, project, 3)  # lines appended after the index was made
        assert g.consume(more[0], "bash", CALL, project).decision == "consumed"
        for env in envs + more:
            expected = _scan(log, env, margin)
            assert recall.recall_consumed(g.ledger, log, env, margin=margin) == (
                expected is not False
            )


def test_a_window_older_than_the_index_is_scanned_before_it(tmp_path: Path) -> None:
    home, project = tmp_path / "guard", tmp_path / "project"
    project.mkdir()
    with Guard.open(home) as g:
        (env,) = _envelopes(g, project, 1)
        assert g.consume(env, "bash", CALL, project).decision == "consumed"
        _envelopes(g, project, 1)  # the newest line is not the consumption
        log = g.audit.path
        recall._indexes.clear()
        size = log.stat().st_size
        fd = os.open(log, os.O_RDONLY)
        try:
            with recall._lock:
                index = recall._index_for(fd, size)
                index._drop_oldest(len(index.times) - 1)  # only the newest line is left
        finally:
            os.close(fd)
        assert index.start > 0
        assert recall.recall_consumed(g.ledger, log, env, margin=timedelta(days=1))


def test_a_replaced_log_gets_a_new_index(tmp_path: Path) -> None:
    home, project = tmp_path / "guard", tmp_path / "project"
    project.mkdir()
    with Guard.open(home) as g:
        envs = _envelopes(g, project, 2)
        assert g.consume(envs[0], "bash", CALL, project).decision == "consumed"
        log = g.audit.path
        assert recall.recall_consumed(g.ledger, log, envs[0])
        copy = tmp_path / "copy.jsonl"
        shutil.copyfile(log, copy)
        os.replace(copy, log)  # the same bytes under another inode
        assert recall.recall_consumed(g.ledger, log, envs[0])
        assert not recall.recall_consumed(g.ledger, log, envs[1])


def test_an_open_guard_still_refuses_a_replay_after_its_ledger_was_edited(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "guard", tmp_path / "project"
    project.mkdir()
    with Guard.open(home) as g:
        (env,) = _envelopes(g, project, 1)
        assert g.consume(env, "bash", CALL, project).decision == "consumed"
        g.consume(_envelopes(g, project, 1)[0], "bash", CALL, project)  # the log moves on
        db = sqlite3.connect(home / LEDGER_FILE)
        db.execute("DELETE FROM consumed")  # the sync position kept: only the recall knows
        db.commit()
        db.close()
        assert g.consume(env, "bash", CALL, project).reasons == ("replay",)
    consumed = [r for r in read_records(home / AUDIT_LOG_FILE) if r.event == "evidence.consumed"]
    assert [r.data["evidenceId"] for r in consumed].count(env["details"]["evidenceId"]) == 1
