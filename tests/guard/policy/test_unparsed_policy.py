"""A user policy file that cannot be read or parsed never leaves the sandbox more open than
it asked for: the network is off, the hidden paths it still shows count, and the problem is
named (issue: holes found by attacking)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard._sandbox import effective_settings
from tests.cli_runner import invoke
from tests.guard.policy.conftest import World

GOOD_HEAD = '[sandbox]\nnetwork = "off"\nhidden = ["~/secret", "/srv/data"]\n'


@pytest.mark.parametrize(
    "tail",
    [
        "\n[[rule]]\nid = 'x'\nverdict = 'block\n",  # an unterminated string further down
        "\nthis is not toml\n",
        "\n[sandbox]\nmode = 'off'\n",  # a table defined twice
    ],
)
def test_a_syntax_error_below_keeps_the_network_off_and_the_hidden_paths(
    world: World, tail: str
) -> None:
    world.user_config(GOOD_HEAD + tail)
    settings, source, problems = effective_settings(world.guard_home, world.project)
    assert (settings.network.mode, source) == ("off", "user")
    assert settings.hidden == ("~/secret", "/srv/data")
    assert settings.mode == "required"
    assert any("network off" in p.message and "TOML" in p.message for p in problems)


@pytest.mark.parametrize(
    "text",
    [
        '[sandbox]\nnetwork = "open"\nwritable = ["/"]\n[sandbox\n',  # asked for open: still off
        "version = 1\n[[rule]\n",  # no [sandbox] at all before the error
        "\x00\x01 not text",
    ],
)
def test_any_file_that_does_not_parse_keeps_the_network_off(world: World, text: str) -> None:
    world.user_config(text)
    settings, _, problems = effective_settings(world.guard_home, world.project)
    assert settings.network.mode == "off"
    assert settings.writable == ()
    assert problems


def test_a_file_that_cannot_be_read_keeps_the_network_off(world: World) -> None:
    world.guard_home.mkdir(parents=True)
    (world.guard_home / "operator-guard.toml").mkdir()  # reading it fails: a directory
    settings, _, problems = effective_settings(world.guard_home, world.project)
    assert settings.network.mode == "off"
    assert any("cannot read" in p.message for p in problems)
    (world.guard_home / "operator-guard.toml").rmdir()
    (world.guard_home / "operator-guard.toml").write_bytes(b"\xff\xfe not utf-8")
    assert effective_settings(world.guard_home, world.project)[0].network.mode == "off"


def test_sandbox_check_names_the_problem_and_exits_non_zero(world: World, tmp_path: Path) -> None:
    world.user_config(GOOD_HEAD + "\n[[rule]\n")
    done = invoke("sandbox", "check", "--cwd", str(world.project), home=world.guard_home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "network: off" in done.stdout
    assert "until this file can be read as TOML" in done.stdout
    world.user_config(GOOD_HEAD)
    ok = invoke("sandbox", "check", "--cwd", str(world.project), home=world.guard_home)
    assert ok.returncode in (0, 7)  # 7 where bubblewrap cannot start here


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ('[approvals]\nheadles = "wait"\n', "headless"),
        ('[sandbox]\nwriteable = ["/x"]\n', "writable"),
        ('[sandboxx]\nmode = "off"\n', "sandbox"),
        ('[[rule]]\nid = "a.b"\nverdict = "block"\nprogramm = ["x"]\n', "program"),
        ('[mcp]\ntrust_hint = ["docs"]\n', "trust_hints"),
    ],
)
def test_a_near_miss_key_says_what_was_meant(world: World, text: str, meant: str) -> None:
    world.user_config(text)
    problems = [p.message for p in world.policy().problems]
    assert any(f"did you mean '{meant}'?" in m for m in problems), problems


def test_a_key_near_nothing_gets_no_guess(world: World) -> None:
    world.user_config("[sandbox]\nzzzqqq = 1\n")
    assert not any("did you mean" in p.message for p in world.policy().problems)
