"""Opaque wrappers (``sudo``, ``su``, ``chroot``, ``tmux`` …): they ask, and what they run is
still looked at, so that a block rule inside still blocks.

Every reading of the inner command is reported (a leading user, root or lock file may or may
not be there), strings with a space or a newline are parsed as scripts, the first reading
inherits stdin, and a chain of wrappers is followed to a fixed depth.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze

Commands = list[tuple[list[str | None], tuple[str, ...]]]
Findings = list[tuple[str, str]]

WHY = "runs another command in a way the analysis does not follow precisely"


def walk(command: str) -> tuple[Commands, Findings]:
    """The simple commands (argv, wrapper chain) and the findings of ``command``."""
    script = analyze(command, cwd="/w", home="/h")
    commands: Commands = [([w.value for w in c.argv], c.via) for c in script.commands]
    return commands, [(f.check, f.detail) for f in script.findings]


def opaque(program: str, command: str) -> tuple[str, str]:
    return ("opaque-wrapper", f"{program} {WHY}: {command}")


@pytest.mark.parametrize(
    "command",
    [
        "sudo rm x",
        "sudo -u root rm x",
        "sudo --user root rm x",
        "sudo --user=root rm x",
        "sudo -E rm x",
        "doas -u root rm x",
        "strace -o out rm x",
        "watch -n 1 rm x",
        "setsid rm x",
        "sudo --chdir /srv rm x",
    ],
)
def test_an_opaque_wrapper_asks_and_reports_the_command_after_its_options(command: str) -> None:
    program = command.split()[0]
    assert walk(command) == ([(["rm", "x"], (program,))], [opaque(program, command)])


@pytest.mark.parametrize(
    ("command", "first"),
    [
        ("chroot /srv rm x", "/srv"),
        ("chroot --userspec u:g /srv rm x", "/srv"),
        ("flock /srv/l rm x", "/srv/l"),
        ("flock -w 5 /srv/l rm x", "/srv/l"),
    ],
)
def test_every_reading_with_and_without_a_leading_argument_is_looked_at(
    command: str, first: str
) -> None:
    program = command.split()[0]
    assert walk(command) == (
        [([first, "rm", "x"], (program,)), (["rm", "x"], (program,))],
        [opaque(program, command)],
    )


def test_a_wrapper_with_two_leading_arguments_is_read_both_ways() -> None:
    assert walk("direnv exec . rm x") == (
        [([".", "rm", "x"], ("direnv",)), (["rm", "x"], ("direnv",))],
        [opaque("direnv", "direnv exec . rm x")],
    )


def test_a_leading_argument_reading_needs_a_word_left() -> None:
    assert walk("chroot /srv") == ([(["/srv"], ("chroot",))], [opaque("chroot", "chroot /srv")])


def test_an_opaque_wrapper_alone_still_asks() -> None:
    assert walk("sudo") == ([], [opaque("sudo", "sudo")])


@pytest.mark.parametrize("command", ["ssh-agent -s", "ssh-agent", "tmux", "screen -ls"])
def test_a_wrapper_whose_command_is_optional_is_plain_without_one(command: str) -> None:
    assert walk(command) == ([(command.split(), ())], [])


@pytest.mark.parametrize(
    ("command", "inner"),
    [("ssh-agent bash", ["bash"]), ("tmux ls", ["ls"]), ("screen -S s top", ["top"])],
)
def test_a_wrapper_whose_command_is_optional_asks_with_one(
    command: str, inner: list[str | None]
) -> None:
    program = command.split()[0]
    assert walk(command) == ([(inner, (program,))], [opaque(program, command)])


def test_a_string_with_a_space_is_parsed_as_a_script() -> None:
    command = 'su -c "rm -rf a" root'
    assert walk(command) == (
        [(["rm", "-rf", "a"], ()), (["root"], ("su",))],
        [opaque("su", command)],
    )


def test_a_string_with_a_newline_is_parsed_as_a_script() -> None:
    command = "sudo $'ls\\nreboot'"
    assert walk(command) == (
        [(["ls"], ()), (["reboot"], ()), (["ls\nreboot"], ("sudo",))],
        [opaque("sudo", command)],
    )


def test_a_word_without_space_is_not_parsed_again() -> None:
    assert walk("sudo rm -rf x")[0] == [(["rm", "-rf", "x"], ("sudo",))]


def test_strings_after_a_command_substitution_are_still_parsed() -> None:
    command = 'sudo echo "$(date)" "rm -rf a"'
    assert walk(command) == (
        [(["date"], ()), (["rm", "-rf", "a"], ()), (["echo", None, "rm -rf a"], ("sudo",))],
        [opaque("sudo", command)],
    )


def test_a_runtime_word_under_an_opaque_wrapper_asks() -> None:
    command = 'sudo "$X" a'
    assert walk(command) == (
        [([None, "a"], ("sudo",))],
        [opaque("sudo", command), ("dynamic-command", 'command name only known at runtime: "$X"')],
    )


def test_a_long_wrapped_command_is_previewed_in_the_finding() -> None:
    command = "sudo rm " + " ".join(f"file{i:03d}" for i in range(40))
    _, findings = walk(command)
    assert findings == [opaque("sudo", command[:119] + "…")]


@pytest.mark.parametrize("stdin", ["echo 'rm -rf a' | {}", "{} <<< 'rm -rf a'"])
def test_the_first_reading_inherits_stdin(stdin: str) -> None:
    commands, findings = walk(stdin.format("sudo bash"))
    assert (["rm", "-rf", "a"], ()) in commands
    assert ("shell-stdin", "bash reads its program on stdin") in findings


@pytest.mark.parametrize("stdin", ["echo 'rm -rf a' | {}", "{} <<< 'rm -rf a'"])
def test_only_the_first_reading_inherits_stdin(stdin: str) -> None:
    # the reading "/srv bash" takes stdin; the reading "bash" (no root) does not
    commands, findings = walk(stdin.format("chroot /srv bash"))
    assert (["rm", "-rf", "a"], ()) not in commands
    assert (["bash"], ("chroot",)) in commands
    assert ("shell-stdin", "bash reads its program on stdin") not in findings


@pytest.mark.parametrize(
    ("command", "via"),
    [
        ("sudo rm x", ("sudo",)),
        ("nice sudo rm x", ("nice", "sudo")),
        ("nice nice nice nice nice sudo rm x", ("nice",) * 5 + ("sudo",)),
        ("sudo sudo sudo sudo sudo sudo rm x", ("sudo",) * 6),
    ],
)
def test_an_opaque_wrapper_up_to_the_chain_limit_is_followed(
    command: str, via: tuple[str, ...]
) -> None:
    assert walk(command)[0] == [(["rm", "x"], via)]


@pytest.mark.parametrize(
    "command",
    ["nice nice nice nice nice nice sudo rm x", "sudo sudo sudo sudo sudo sudo sudo rm x"],
)
def test_an_opaque_wrapper_beyond_the_chain_limit_is_not_followed_but_asks(command: str) -> None:
    commands, findings = walk(command)
    assert commands == []
    assert opaque("sudo", "sudo rm x") in findings


def test_strings_beyond_the_chain_limit_are_not_parsed() -> None:
    command = "nice nice nice nice nice nice sudo 'rm -rf a'"
    assert walk(command) == ([], [opaque("sudo", "sudo 'rm -rf a'")])
