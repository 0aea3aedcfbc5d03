"""A secret split by a backslash-newline (a line continuation) is hidden in the dialog's
command line and in the audit log, not shown half in clear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard._sidecar.escape import command_line
from tests.guard.cli.test_cli import run

SPLIT = [
    ('curl -H "Authorization: Bearer sk-abc123\\\ndef456" https://x', "def456"),
    ("export TOKEN=abc\\\ndefghi && make", "defghi"),
    ("export TOKEN=abc\\\r\ndefghi; ls", "defghi"),
    ("deploy --password abc\\\ndefghi", "defghi"),
]


@pytest.mark.parametrize(("command", "rest"), SPLIT)
def test_the_dialog_never_shows_the_rest_of_a_split_secret(command: str, rest: str) -> None:
    shown = command_line(command)
    assert rest not in shown and "[REDACTED]" in shown


def test_a_newline_without_a_backslash_still_separates_commands() -> None:
    shown = command_line("export TOKEN=abc\ndefghi")
    assert shown.endswith("\\ndefghi") and "abc" not in shown


@pytest.mark.parametrize(("command", "rest"), SPLIT)
def test_the_log_never_holds_the_rest_of_a_split_secret(
    tmp_path: Path, command: str, rest: str
) -> None:
    home = tmp_path / "home"
    (tmp_path / "p").mkdir()
    proc = run(
        home,
        "record",
        "--tool",
        "bash",
        "--input",
        json.dumps({"command": command + " && rm -rf build"}),
        "--cwd",
        str(tmp_path / "p"),
        "--confirmed",
    )
    assert proc.returncode == 0, proc.stderr
    log = (home / "audit.jsonl").read_text("utf-8")
    assert "[REDACTED]" in log and rest not in log
