"""A call a grant may cover is analysed once, whatever the number of grants tried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import guard._grants.desk as desk
import guard._grants.match as match
from guard import Guard

RM = {"command": "rm -f a.txt"}


def test_the_call_is_analysed_once_for_every_grant_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path.resolve() / "work"
    workspace.mkdir()
    for name in ("a.txt", "b.txt", "c.log"):
        (workspace / name).write_text(name)
    analysed: list[str] = []
    original = desk.call_facts

    def counting(tool_name: str, tool_input: Any, cwd: str, verdict: Any) -> Any:
        analysed.append(str(tool_input.get("command")))
        return original(tool_name, tool_input, cwd, verdict)

    with Guard.open(tmp_path / "home") as guard:
        guard.attribute("session-1")
        offered = guard.grants.offers("bash", RM, workspace, workspace=workspace)
        said = guard.record("bash", RM, workspace, confirmed=True, origin="runtime-ui-confirm")
        assert said.evidence_id is not None and len(offered) == 2
        for _ in range(3):  # three grants of exactly a.txt, none covers b.txt
            guard.grants.create(offered[0], said.evidence_id, workspace=workspace)
        monkeypatch.setattr(desk, "call_facts", counting)
        monkeypatch.setattr(match, "call_facts", counting)
        found = guard.grants.covered(
            "bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace
        )
        assert found is None and analysed == ["rm -f b.txt"]
        guard.grants.create(offered[1], said.evidence_id, workspace=workspace)  # ./*.txt
        analysed.clear()
        found = guard.grants.covered(
            "bash", {"command": "rm -f b.txt"}, workspace, workspace=workspace
        )
        assert found is not None and found.envelope is not None
        assert found.envelope.details.covered_by is not None
        assert analysed == ["rm -f b.txt"]
