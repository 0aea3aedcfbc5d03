"""git options that run a command, in every spelling git itself accepts.

git's option parser takes ``-x CMD``, ``-xCMD``, ``-ixCMD`` (a cluster of short options),
``--exec=CMD`` and any unambiguous abbreviation (``--exe=CMD``, ``--upload-p=CMD``). Each
must ask, and the command it runs must be the one walked, so ``rm -rf /`` given that way is
seen. ``git clone -c``/``--config`` writes configuration into the new repository before
the fetch (``core.sshCommand`` …) and is checked like ``git -c``.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("git rebase -x 'rm y' main", "-x"),
        ("git rebase -x'rm y' main", "-xrm y"),
        ("git rebase -ix'rm y' main", "-ixrm y"),
        ("git rebase --exec='rm y' main", "--exec=rm y"),
        ("git rebase --exec 'rm y' main", "--exec"),
        ("git rebase --exe='rm y' main", "--exe=rm y"),
        ("git rebase --ex 'rm y' main", "--ex"),
        ("git clone -u 'rm y' u", "-u"),
        ("git clone -qu'rm y' u", "-qurm y"),
        ("git clone --upload-pack='rm y' u", "--upload-pack=rm y"),
        ("git fetch --upload-p='rm y' origin", "--upload-p=rm y"),
        ("git push --receive-pack 'rm y' origin", "--receive-pack"),
        ("git push --rec='rm y' origin", "--rec=rm y"),
        ("git push --exec='rm y' origin", "--exec=rm y"),
    ],
)
def test_every_spelling_of_a_run_option_asks_and_its_command_is_walked(
    command: str, word: str
) -> None:
    sub = command.split()[1]
    assert findings(command) == [("git-config", f"git {sub} {word} runs a program")]
    assert ["rm", "y"] in argvs(command)


def test_the_word_after_an_equals_joined_exec_is_not_taken_for_a_command() -> None:
    assert argvs("git rebase --exec=true main") == [
        ["git", "rebase", "--exec=true", "main"],
        ["true"],
    ]


@pytest.mark.parametrize(
    "command",
    [
        "git rebase -X theirs main",
        "git rebase -i main",
        "git clone -b main u",
        "git clone --recurse-submodules u",
        "git clone -c color.ui=auto u",
        "git push -u origin main",
        "git pull --rebase origin main",
        "git fetch -- origin",  # a bare "--" is not an abbreviation of any option
        "git push --repo=origin",
    ],
)
def test_options_that_run_nothing_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("git clone -c core.sshCommand='rm z' u", "core.sshCommand='rm z'"),
        ("git clone --config core.fsmonitor=x u", "core.fsmonitor=x"),
        ("git clone --config=core.fsmonitor=x u", "--config=core.fsmonitor=x"),
        ("git clone -ccore.pager=x u", "-ccore.pager=x"),
        ('git clone -c "$c" u', '"$c"'),
        ("git clone -c", ""),
    ],
)
def test_git_clone_config_that_can_run_programs_asks(command: str, raw: str) -> None:
    assert findings(command) == [
        ("git-config", "git clone -c sets configuration that can run programs: " + raw)
    ]


def test_a_run_option_with_a_runtime_command_asks_and_walks_nothing_made_up() -> None:
    assert findings('git rebase -x "$C" main') == [("git-config", "git rebase -x runs a program")]
    assert argvs('git rebase -x "$C" main') == [["git", "rebase", "-x", None, "main"]]


@pytest.mark.parametrize(
    ("command", "word", "walked"),
    [
        # the shortest abbreviation git could take ("--" alone is not one)
        ("git rebase --e='rm y' main", "--e=rm y", ["rm", "y"]),
        ("git fetch --u='rm y' origin", "--u=rm y", ["rm", "y"]),
        # the program named in a glued cluster may contain the option's letter again
        ("git rebase -x'rm ax' main", "-xrm ax", ["rm", "ax"]),
        ("git clone -u'rm uu' u", "-urm uu", ["rm", "uu"]),
        # a bare -x takes the next word as its command, whatever the subcommand
        ("git pull -x 'rm y'", "-x", ["rm", "y"]),
        ("git push -x 'rm y' origin", "-x", ["rm", "y"]),
    ],
)
def test_run_options_at_their_boundaries_ask_and_walk_exactly_their_command(
    command: str, word: str, walked: list[str]
) -> None:
    sub = command.split()[1]
    assert findings(command) == [("git-config", f"git {sub} {word} runs a program")]
    assert argvs(command)[1:] == [walked]


@pytest.mark.parametrize(
    "command",
    [
        "git clone -c color.ui=auto",  # the setting is the last word
        "git clone --config=color.ui=auto u",
        "git clone --config=log.date=format:%H=%M u",  # "=" inside the value
        "git clone -ccolor.pager=less u",
        "git clone --config color.ui=auto u",
    ],
)
def test_git_clone_settings_that_run_nothing_do_not_ask(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("git clone -c core.sshCommand=x", "core.sshCommand=x"),
        ("git clone -cx u", "-cx"),
        ("git clone --config=core.pager=a=b u", "--config=core.pager=a=b"),
    ],
)
def test_git_clone_settings_at_their_boundaries_ask(command: str, raw: str) -> None:
    assert findings(command) == [
        ("git-config", "git clone -c sets configuration that can run programs: " + raw)
    ]
