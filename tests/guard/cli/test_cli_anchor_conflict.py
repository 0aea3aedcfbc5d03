"""``pi-guard audit anchor`` refuses a fork: a log rolled back to an earlier copy and grown
again has another checkpoint of a size already anchored (``anchor-conflict``); the anchored
checkpoint stays byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.guard.cli.test_cli import one_line_error, record, run


def test_anchoring_a_fork_of_an_anchored_size_is_refused(tmp_path: Path) -> None:
    home, project, anchors = tmp_path / "home", tmp_path / "project", tmp_path / "anchors"
    project.mkdir()
    record(home, project)
    saved = tmp_path / "saved"
    shutil.copytree(home, saved)
    record(home, project, "--tool-call-id", "call_a")
    first = run(home, "audit", "anchor", "--to", str(anchors))
    assert first.returncode == 0, first.stderr
    (kept,) = anchors.rglob("*.checkpoint")
    before = {p: p.read_bytes() for p in anchors.rglob("*") if p.is_file()}

    # The same log id, the same number of records, another last record: a fork.
    shutil.rmtree(home)
    shutil.copytree(saved, home)
    record(home, project, "--tool-call-id", "call_b")
    assert run(home, "audit", "verify").returncode == 0  # on its own the fork verifies
    fork = run(home, "audit", "anchor", "--to", str(anchors))
    assert fork.returncode != 0 and "anchor-conflict" in one_line_error(fork)
    assert kept.name in fork.stderr
    assert {p: p.read_bytes() for p in anchors.rglob("*") if p.is_file()} == before
    # And the fork no longer verifies against what the directory holds.
    against = run(home, "audit", "verify", "--anchor", str(anchors))
    assert against.returncode == 4, against.stdout
