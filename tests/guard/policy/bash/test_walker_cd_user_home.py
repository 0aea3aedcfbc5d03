"""``cd ~user`` goes to that user's home: later relative paths resolve there, not in the cwd."""

from __future__ import annotations

import pwd

import pytest

from guard._policy.bash.walker import analyze


@pytest.fixture(autouse=True)
def _no_cdpath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CDPATH", raising=False)


def rm_cwd(command: str) -> str:
    script = analyze(command, cwd="/w", home="/h")
    return [c.cwd for c in script.commands if c.program == "rm"][-1]


def test_cd_to_a_named_users_home_follows_it() -> None:
    root_home = pwd.getpwnam("root").pw_dir.rstrip("/") or "/"
    assert rm_cwd("cd ~root && rm a") == root_home
    assert rm_cwd("cd ~root/sub && rm a") == root_home.rstrip("/") + "/sub"


def test_cd_to_an_unknown_users_home_stays_a_literal_directory() -> None:
    assert rm_cwd("cd ~no-such-user-here && rm a") == "/w/~no-such-user-here"
