"""``command_mentions`` reproduces its committed known answers over a large corpus.

The paths a shell command touches decide whether the operator is asked, so any change to
them must be a change someone meant: regenerate ``mentions_known.txt`` (see
``corpus_mentions``) and review the diff.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.guard.policy.corpus_mentions import KNOWN, commands, render


def test_the_corpus_is_large_and_covers_the_argument_shapes() -> None:
    assert len(list(commands())) > 3000


def test_command_mentions_reproduce_the_known_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(root / "home"))
    got = render(root)
    want = KNOWN.read_text(encoding="utf-8")
    if got != want:
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "known", "now", n=2)
        pytest.fail("command_mentions changed:\n" + "\n".join(list(diff)[:80]))


def test_the_known_answers_name_no_file_of_the_machine_they_were_written_on() -> None:
    """An absolute path outside the small world must come from the command's own text.

    A glob such as ``/*`` once expanded to this machine's top-level directories, so the answers
    differed on every machine.
    """
    command = ""
    strangers: list[str] = []
    for line in KNOWN.read_text(encoding="utf-8").splitlines():
        if line.startswith("$ "):
            command = line[2:]
        elif line.startswith("    "):
            path = line.split()[1]
            first = path.strip("/").split("/")[0]
            if path.startswith("/") and first and first not in command:
                strangers.append(f"{command}: {path}")
    assert strangers == []
