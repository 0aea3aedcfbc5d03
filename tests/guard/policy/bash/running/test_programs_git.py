"""git in the bash analysis: ``-c`` settings, global options, and subcommands that run programs.

``git -c`` asks unless the setting is on a small safe list; global options that choose
programs ask; the subcommand is found after the global options (``-C DIR``, ``--git-dir DIR``
… take a value). ``git config`` that writes, ``difftool -x``, ``grep -O``, ``hook``,
``apply``/``am``, ``submodule foreach``, ``rebase -x``, ``bisect run`` … ask.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import MAX_DEPTH, analyze

CONFIG_WRITE = ("git-config", "git config changes configuration that can run programs")


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def argvs(command: str) -> list[list[str | None]]:
    script = analyze(command, cwd="/w", home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


@pytest.mark.parametrize(
    "command",
    [
        "git --version",
        "git -p --no-pager",
        "git -c",  # no setting at all
        "git -c color.ui=auto log",
        "git -c color.ui=auto -c user.name=x status",
        "git -C repo status",
        "git config --get user.name",
        "git config user.name",
        "git config -l",
        "git difftool HEAD",
        "git grep x",
        "git apply --check x.patch",
        "git am --stat x",
        "git submodule update",
        "git rebase main",
        "git rebase -i main",
        "git pull --rebase origin main",
        "git push -u origin main",
        "git fetch --all -p",
        "git clone -b main u",
        "git clone u dir",
        "git config --global user.name",  # an option is not a second name: still a read
        "git config --unset x.y",
        "git apply --stat x.patch",
        "git apply --numstat x.patch",
        "git apply --summary x.patch",
        "git am --check x.mbox",
        "git p4 clone //depot",
        "git log foreach",  # only git submodule foreach runs a command
        "git bisect start",
        "git push origin run",  # only git bisect run runs the rest
    ],
)
def test_ordinary_git_commands_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "raw"),
    [
        ("git -c core.pager=less", "core.pager=less"),
        ("git -c core.pager=less log", "core.pager=less"),
        ("git -c color.ui=auto -c core.pager=less log", "core.pager=less"),
        ("git -C repo -c core.pager=less log", "core.pager=less"),
        ('git -c "$c" log', '"$c"'),
    ],
)
def test_git_c_with_a_setting_that_can_run_programs_asks(command: str, raw: str) -> None:
    assert findings(command) == [
        ("git-config", "git -c sets configuration that can run programs: " + raw)
    ]


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("git --exec-path=/tmp/x status", "--exec-path=/tmp/x"),
        ("git --upload-pack=x ls-remote u", "--upload-pack=x"),
        ("git --receive-pack=x status", "--receive-pack=x"),
        ("git --config-env=core.pager=P log", "--config-env=core.pager=P"),
    ],
)
def test_global_options_that_choose_programs_ask(command: str, option: str) -> None:
    assert findings(command) == [
        ("git-config", "git option that runs or chooses programs: " + option)
    ]


@pytest.mark.parametrize(
    "command",
    [
        "git config alias.x y",
        "git config user.name x",
        'git config "$k" x',
        "git -p -c color.ui=auto config alias.x y",
        "git -c color.ui=auto config alias.x y",
        "git -c color.ui=auto -C repo config alias.x y",  # -C after -c: still global options
        "git -C repo config alias.x y",
        "git --git-dir repo/.git config alias.x y",
        "git --work-tree w config alias.x y",
        "git --namespace n config alias.x y",
    ],
)
def test_the_subcommand_is_found_after_global_options(command: str) -> None:
    assert findings(command) == [CONFIG_WRITE]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git difftool -x meld", ("git-config", "git difftool runs a program: -x")),
        ("git grep -O vim x", ("git-config", "git grep runs a program: -O")),
        ("git hook run pre-commit", ("git-config", "git hook runs a program: run")),
        ("git apply x.patch", ("opaque-write", "git apply writes files named inside the patch")),
        ("git am x.mbox", ("opaque-write", "git am writes files named inside the patch")),
        ("git fetch ext::sh", ("git-config", "git fetch ext::sh runs a program")),
        (
            "git difftool --extcmd=meld",
            ("git-config", "git difftool runs a program: --extcmd=meld"),
        ),
        (
            "git grep --open-files-in-pager=vim x",
            ("git-config", "git grep runs a program: --open-files-in-pager=vim"),
        ),
        (
            "git archive --exec=x --remote=r HEAD",
            ("git-config", "git archive runs a program: --exec=x"),
        ),
        ("git instaweb --httpd=x", ("git-config", "git instaweb runs a program: --httpd=x")),
        ("git instaweb --browser=x", ("git-config", "git instaweb runs a program: --browser=x")),
        ("git instaweb start", ("git-config", "git instaweb runs a program: start")),
        (
            "git send-email --smtp-server=/bin/x a.patch",
            ("git-config", "git send-email runs a program: --smtp-server=/bin/x"),
        ),
        ('git svn "$c"', ("git-config", "git svn runs a program: None")),
        ('git p4 "$c"', ("git-config", "git p4 runs a program: None")),
        (
            "git fetch --upload-pack=x origin",
            ("git-config", "git fetch --upload-pack=x runs a program"),
        ),
        (
            "git pull --upload-pack=x origin",
            ("git-config", "git pull --upload-pack=x runs a program"),
        ),
        (
            "git ls-remote --upload-pack=x u",
            ("git-config", "git ls-remote --upload-pack=x runs a program"),
        ),
        (
            "git push --receive-pack=x origin",
            ("git-config", "git push --receive-pack=x runs a program"),
        ),
        ("git push --exec=x origin", ("git-config", "git push --exec=x runs a program")),
        ("git rebase -x", ("git-config", "git rebase -x runs a program")),  # no command after it
    ],
)
def test_subcommands_that_run_programs_or_write_unseen_files_ask(
    command: str, expected: tuple[str, str]
) -> None:
    assert findings(command) == [expected]


def test_git_rebase_x_runs_its_command_and_it_is_walked() -> None:
    assert findings("git rebase -x 'rm y' main") == [("git-config", "git rebase -x runs a program")]
    assert ["rm", "y"] in argvs("git rebase -x 'rm y' main")


def test_git_bisect_run_runs_the_rest_of_the_line() -> None:
    assert findings("git bisect run rm w") == [("git-config", "git bisect run runs a program")]
    assert ["rm", "w"] in argvs("git bisect run rm w")


def test_git_submodule_foreach_walks_its_command() -> None:
    assert findings("git submodule foreach 'rm -rf x'") == [
        ("inline-code", "git submodule foreach runs a command in every submodule")
    ]
    assert ["rm", "-rf", "x"] in argvs("git submodule foreach 'rm -rf x'")


def test_git_rebase_x_walks_the_next_word_only() -> None:
    assert argvs("git rebase -x 'rm y' main") == [
        ["git", "rebase", "-x", "rm y", "main"],
        ["rm", "y"],
    ]
    assert argvs("git rebase -x 'rm y'") == [["git", "rebase", "-x", "rm y"], ["rm", "y"]]


def test_git_clone_u_runs_its_command_and_it_is_walked() -> None:
    assert findings("git clone -u 'rm y' u") == [("git-config", "git clone -u runs a program")]
    assert ["rm", "y"] in argvs("git clone -u 'rm y' u")


def test_git_bisect_run_records_how_the_command_is_reached() -> None:
    script = analyze("git bisect run rm w", cwd="/w", home="/h")
    assert [(c.program, c.via) for c in script.commands] == [
        ("git", ()),
        ("rm", ("git bisect run",)),
    ]


def test_git_submodule_foreach_walks_only_the_command_words() -> None:
    assert argvs("git submodule foreach 'rm -rf x'") == [
        ["git", "submodule", "foreach", "rm -rf x"],
        ["rm", "-rf", "x"],
    ]
    assert findings('git submodule foreach "$cmd"') == [
        ("inline-code", "git submodule foreach runs a command in every submodule")
    ]


def _wrapped(command: str, times: int) -> str:
    for _ in range(times):
        command = "bash -c '" + command.replace("'", "'\\''") + "'"
    return command


@pytest.mark.parametrize(
    ("command", "why", "first"),
    [
        ("git submodule foreach 'rm x'", "git submodule foreach", "inline-code"),
        ("git rebase -x 'rm x' main", "git rebase -x", "git-config"),
    ],
)
def test_commands_git_runs_count_as_one_more_nesting_level(
    command: str, why: str, first: str
) -> None:
    assert [f.check for f in analyze(_wrapped(command, MAX_DEPTH - 1), cwd="/w").findings] == [
        first
    ]
    deep = [(f.check, f.detail) for f in analyze(_wrapped(command, MAX_DEPTH), cwd="/w").findings]
    assert deep[1:] == [("nesting-too-deep", f"{why}: nested deeper than {MAX_DEPTH} levels")]


def test_commands_after_git_bisect_run_are_judged_like_any_other(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash("git bisect run psql -c 'drop table x'")
    assert verdict.verdict == "confirm"
    assert "builtin.sql-destructive" in verdict.rule_ids
    assert findings("git bisect run source") == [
        ("git-config", "git bisect run runs a program"),
        ("shell-stdin", "source runs code from stdin or a stream"),
    ]


def test_git_rebase_x_is_walked_before_a_branch_only_known_at_runtime() -> None:
    assert ["rm", "y"] in argvs("git rebase -x 'rm y' \"$b\"")


@pytest.mark.parametrize("option", ["--httpd=x", "--browser=x"])
def test_an_option_naming_a_server_or_browser_asks_under_any_listed_subcommand(
    option: str,
) -> None:
    assert findings(f"git grep {option} pattern") == [
        ("git-config", f"git grep runs a program: {option}")
    ]
