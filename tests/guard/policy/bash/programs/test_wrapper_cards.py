"""Wrappers have cards: how each finds the command it runs is its card's ``wraps``, and what
the card says is what the analysis does. A hostile model wraps a destructive command in
every wrapper, with every option the wrapper takes, to get it judged as something else."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from guard._policy import Verdict
from guard._policy.bash.programs import CARDS, Card, card_for
from guard._policy.bash.running.wrappers import wrapper_handler
from guard._policy.bash.walker import analyze

WRAPPERS: tuple[Card, ...] = tuple(card for card in CARDS if card.wraps is not None)

# Words a wrapper takes before its command that are no option (timeout's duration, taskset's
# mask), and the options after which its words are no command (``command -v`` looks a name
# up, ``taskset -p`` names a process, ``npx -c`` runs its value: tested elsewhere).
_BEFORE = {"timeout": ["5"], "taskset": ["1"]}
_RUNS_NOTHING = {
    ("command", "-v"),
    ("command", "-V"),
    ("taskset", "-p"),
    ("taskset", "--pid"),
    ("npx", "-c"),
    ("npx", "--call"),
}
_DESTROYS = ["rm", "-rf", "/"]


def test_every_wrapper_is_found_by_its_card_and_only_a_wrapper_is() -> None:
    names = {name for card in WRAPPERS for name in card.names}
    assert {"sudo", "env", "xargs", "timeout", "nice", "uv", "npm", "busybox"} <= names
    assert all(wrapper_handler(name) is not None for name in names)
    assert all(wrapper_handler(n) is None for c in CARDS if c.wraps is None for n in c.names)
    assert wrapper_handler("frobnicate") is None


def test_a_card_says_what_it_is_once() -> None:
    for card in WRAPPERS:
        assert card.wraps is not None
        spec = card.wraps
        assert not set(spec.short_values) & set(spec.short_flags), card.names
        assert not spec.long_values & spec.long_flags, card.names
        assert bool(spec.subcommands) == (spec.how == "subcommand"), card.names


def _wrapped() -> Iterator[tuple[str, str]]:
    """(a destructive command inside one wrapper with one of its options, the wrapper)."""
    for card in WRAPPERS:
        spec = card.wraps
        assert spec is not None
        for name in sorted(card.names):
            before = _BEFORE.get(name, [])
            if spec.how == "subcommand":
                for sub in spec.subcommands:
                    yield " ".join([name, sub, *_DESTROYS]), name
                continue
            if spec.how in ("env", "xargs", "applet"):
                continue
            lead = [["x"] * skip for skip in spec.leading]
            options: list[list[str]] = [[]]
            options += [[f"-{c}", "1"] for c in spec.short_values]
            options += [[f"{o}=1"] for o in sorted(spec.long_values)]
            options += [[f"-{c}"] for c in spec.short_flags]
            options += [[o] for o in sorted(spec.long_flags)]
            for option in options:
                if (name, option[0].split("=")[0] if option else "") in _RUNS_NOTHING:
                    continue
                for words in lead:
                    yield " ".join([name, *option, *before, *words, *_DESTROYS]), name


WRAPPED = tuple(_wrapped())


def test_every_wrapper_and_option_is_tried() -> None:
    assert len(WRAPPED) > 200
    assert {name for _, name in WRAPPED} >= {"sudo", "nice", "uv", "ssh", "direnv", "gdb"}


@pytest.mark.parametrize(("command", "wrapper"), WRAPPED)
def test_a_destructive_command_is_judged_inside_every_wrapper(
    bash: Callable[[str], Verdict], command: str, wrapper: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "block", (command, verdict.rule_ids)
    assert "builtin.catastrophic-target" in verdict.rule_ids, command


@pytest.mark.parametrize(
    "command",
    [
        "nice --frobnicate ls",
        "timeout --kill 5 ls",
        "time -Z ls",
        "command -x ls",
        "env --frob ls",
    ],
)
def test_an_option_a_wrappers_card_does_not_know_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict != "allow", command
    assert "builtin.opaque-wrapper" in verdict.rule_ids, command


@pytest.mark.parametrize(
    ("command", "read_as"),
    [("npm ls", "npm"), ("uv pip list", "uv"), ("tmux", "tmux"), ("ssh-agent -s", "ssh-agent")],
)
def test_a_wrapper_that_runs_no_command_this_time_is_the_program_itself(
    command: str, read_as: str
) -> None:
    card = card_for(read_as)
    assert card is not None
    assert card.wraps is not None
    commands = analyze(command, cwd="/w", home="/h").commands
    assert [c.program for c in commands] == [read_as]
