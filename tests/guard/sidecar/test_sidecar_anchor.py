"""The sidecar keeps the checkpoint in the anchor directory at session start and end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from audit.tlog import AnchorDir, open_checkpoint
from audit.verify import verify_log
from guard import Guard
from guard._evidence.anchors import log_origin
from tests.guard.sidecar.test_sidecar import call, rpc, run


def test_a_session_anchors_its_start_and_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    anchors = tmp_path / "anchors"
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    run(
        home,
        rpc("record", {**call(project), "confirmed": True}),
        rpc("audit.toolExecuted", {**call(project), "toolCallId": "c1", "isError": False}, 2),
    )
    with Guard.open(home) as guard:
        keys = guard.public_keyring().public_keys()
    log = home / "audit.jsonl"
    origin = log_origin(log)
    assert origin is not None
    kept = sorted((anchors / origin.rsplit("/", 1)[1]).glob("*.checkpoint"))
    assert len(kept) == 2  # the start and the end of the session
    sizes = [open_checkpoint(p.read_bytes(), keys).checkpoint.size for p in kept]
    assert sizes[0] < sizes[1]
    latest, problems = AnchorDir(anchors).latest(keys, origin)
    assert latest is not None and problems == []
    assert verify_log(log, keys, against=latest.note, resume=latest.state).decision == "intact"


def test_an_unwritable_anchor_never_fails_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the anchor directory should be")
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(blocker))
    (reply,) = run(home, rpc("evaluate", call(project)))
    assert reply["result"]["action"] == "confirm"


def test_anchoring_into_git_commits_each_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    anchors = tmp_path / "anchors"
    anchors.mkdir()
    subprocess.run(["git", "init", "-q", str(anchors)], check=True)
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    run(home, rpc("health"))
    commits = subprocess.run(
        ["git", "-C", str(anchors), "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert commits[0].startswith("checkpoint log_")
