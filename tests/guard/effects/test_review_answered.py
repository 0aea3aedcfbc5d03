"""After the operator's yes: the file the dialog named exactly is not asked about again
(``cp .env.example .env``), git's bookkeeping of a git command they saw is part of the call
(``git checkout -- FILE`` writes ``.git/index``), and nothing else is let through. Real
overlay, real git."""

from __future__ import annotations

import os

from tests.guard.effects.conftest import Overlay
from tests.guard.effects.test_review import git, make_repo, review


def test_a_protected_file_the_yes_named_exactly_is_applied(overlay: Overlay) -> None:
    ws = overlay.workspace
    (ws / ".env.example").write_text("A=1\n")
    env = os.path.realpath(ws / ".env")
    _, _, result = review(overlay, "cp .env.example .env", approved=(env,), answered=True)
    assert result.decision != "held", result
    assert (ws / ".env").read_text() == "A=1\n"


def test_a_protected_file_the_yes_did_not_name_is_held(overlay: Overlay) -> None:
    ws = overlay.workspace
    (ws / ".env.example").write_text("A=1\n")
    named = os.path.realpath(ws / ".env.example")
    _, _, result = review(overlay, "cp .env.example .env.local", approved=(named,))
    assert result.decision == "held"
    assert {h.reason for h in result.held} == {"protected"}


def test_git_bookkeeping_after_a_yes_to_git_is_not_asked_again(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    (ws / "README.md").write_text("changed\n")
    target = os.path.realpath(ws / "README.md")
    _, _, result = review(overlay, "git checkout -- README.md", approved=(target,), answered=True)
    assert result.decision != "held", result
    assert (ws / "README.md").read_text() == "readme\n"


def test_without_the_yes_to_git_the_index_is_beyond_the_approval(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    (ws / "README.md").write_text("changed\n")
    target = os.path.realpath(ws / "README.md")
    _, _, result = review(overlay, "git checkout -- README.md", approved=(target,))
    assert result.decision == "held"
    assert "beyond-approval" in {h.reason for h in result.held}


def test_a_yes_to_git_never_covers_replacing_the_repository(overlay: Overlay) -> None:
    ws = overlay.workspace
    make_repo(ws)
    target = os.path.realpath(ws / "README.md")
    _, _, result = review(
        overlay, "rm -rf .git && git init -q . && git checkout -- README.md 2>/dev/null; true",
        approved=(target,), answered=True,
    )  # fmt: skip
    assert result.decision == "held"
    assert {h.reason for h in result.held} & {"beyond-approval", "repository"}
    assert (ws / ".git" / "refs" / "heads").iterdir()  # the history is still there
    git(ws, "cat-file", "-e", "HEAD")
