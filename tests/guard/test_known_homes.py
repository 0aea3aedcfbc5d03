"""Another guard home of the user's is kept from the agent, not only the session's own.

A second home outside ``$HOME`` (``$PI_OPERATOR_GUARD_HOME`` elsewhere, another install's, one
under ``/var/tmp``) was visible inside the sandbox: its signing key and its sessions'
approval sockets. Each home the guard opens is noted; the sandbox hides every one and pi's
file tools are blocked there, and the note itself is out of the agent's reach.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from guard import Guard
from guard._policy import Policy
from guard._policy.settings.homes import (
    MAX_KNOWN_HOMES,
    known_homes,
    known_homes_file,
    remember_home,
)
from tests.guard.sandbox.conftest import SECRET, make_layout, needs_bwrap, run_proved


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return home


def test_every_home_the_guard_opens_is_noted(tmp_path: Path, user_home: Path) -> None:
    other = tmp_path / "var-tmp" / "guard-home"
    with Guard.open(other):
        pass
    assert known_homes() == (str(other),)
    assert known_homes_file() == user_home / ".local" / "state" / "pi-operator-guard" / "homes"
    assert known_homes_file().stat().st_mode & 0o077 == 0
    with Guard.open(other):  # noted once
        pass
    assert known_homes() == (str(other),)


def test_the_note_is_bounded_and_forgets_homes_that_are_gone(
    tmp_path: Path, user_home: Path
) -> None:
    homes = [tmp_path / f"h{i}" for i in range(MAX_KNOWN_HOMES + 5)]
    for home in homes:
        home.mkdir()
        remember_home(home)
    assert known_homes() == tuple(str(h) for h in homes[-MAX_KNOWN_HOMES:])
    homes[-1].rmdir()
    assert str(homes[-1]) not in known_homes()


def test_pi_file_tools_never_reach_another_home(tmp_path: Path, user_home: Path) -> None:
    other = tmp_path / "var-tmp" / "guard-home"
    with Guard.open(other):
        pass
    (other / "sessions" / "s1").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "link").symlink_to(other)
    policy = Policy.load(tmp_path / "this-home", project)

    def judged(tool: str, **args: str) -> str:
        return policy.classify(tool, args, project).verdict

    for path in (f"{other}/signing.key", "link/signing.key", f"{other}/sessions/s1/page.key"):
        assert judged("read", path=path) == "block", path
    assert judged("write", path=f"{other}/operator-guard.toml", content="") == "block"
    assert judged("grep", pattern="PRIVATE", path=str(other)) == "block"
    assert judged("bash", command=f"cat {other}/signing.key") == "block"
    assert judged("write", path=str(known_homes_file()), content="") == "block"


@pytest.fixture
def var_tmp_home() -> Iterator[Path]:
    """A guard home under /var/tmp: outside $HOME and outside the sandbox's private /tmp."""
    top = Path(tempfile.mkdtemp(prefix="pi-guard-other-home-", dir="/var/tmp"))
    try:
        yield top / "guard-home"
    finally:
        shutil.rmtree(top)


@needs_bwrap
def test_a_sandboxed_command_cannot_see_another_home(
    tmp_path: Path, user_home: Path, var_tmp_home: Path
) -> None:
    layout = make_layout(tmp_path / "world")
    other = var_tmp_home
    with Guard.open(other):
        pass
    (other / "signing.key").chmod(0o600)
    (other / "planted.txt").write_text(SECRET + "\n")
    (other / "sessions" / "s1").mkdir(parents=True)
    (other / "sessions" / "s1" / "approvals.sock").write_text("")
    env = {**os.environ, "HOME": str(user_home)}
    result = run_proved(
        layout,
        f"cat {other}/planted.txt {other}/signing.key; ls {other}/sessions; "
        f"cat {known_homes_file()}; echo done",
        env=env,
    )
    assert SECRET not in result.stdout
    assert "PRIVATE KEY" not in result.stdout
    assert "s1" not in result.stdout
    assert str(other) not in result.stdout
    assert result.stdout.rstrip().endswith("done")
