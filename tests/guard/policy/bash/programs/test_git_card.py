"""git's card, attacked through every way of spelling and wrapping a git command: what it
destroys is named and asked about, what it runs is found, its irregular forms never turn a
commit or a stash into a path."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.programs import card_for, touched
from guard._policy.bash.walker import analyze
from tests.guard.policy.conftest import World

# One destructive git command, spelled and wrapped the ways an agent might try.
SPELLINGS = [
    "git {}",
    "/usr/bin/git {}",
    "\\git {}",
    "'git' {}",
    'g"i"t {}',
    "command git {}",
    "env git {}",
    "env -i git {}",
    "nice -n 5 git {}",
    "timeout 10 git {}",
    "nohup git {}",
    "time git {}",
    "exec git {}",
    "bash -c 'git {}'",
    'sh -c "git {}"',
    "true && git {}",
    "false || git {}",
    "(git {})",
    "{{ git {}; }}",
    "echo x | git {}",
    "git -C . {}",
    "git -c color.ui=auto {}",
    "git --git-dir=.git --work-tree=. {}",
    "git 2>&1 {}",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    ("sub", "rule"),
    [
        ("reset --hard HEAD", "builtin.git-reset-hard"),
        ("clean -fdx", "builtin.git-clean"),
    ],
)
def test_a_destructive_git_command_asks_however_it_is_spelled(
    bash: Callable[[str], Verdict], spelling: str, sub: str, rule: str
) -> None:
    command = spelling.format(sub)
    verdict = bash(command)
    assert verdict.verdict != "allow", command
    assert rule in verdict.rule_ids, command


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("git stash drop", []),
        ("git reset --hard HEAD", ["."]),
        ("git checkout -- a.txt", ["a.txt"]),
        ("git checkout main -- a.txt b.txt", ["a.txt", "b.txt"]),
        ("git restore --staged --worktree a.txt", ["a.txt"]),
        ("git switch -f main", ["."]),
        ("git clean -fd", ["."]),
        ("git rm -r sub", ["sub"]),
        ("git -C . clean -f", ["."]),
    ],
)
def test_what_git_destroys_is_the_target_never_a_commit_or_a_stash(
    world: World, command: str, targets: list[str]
) -> None:
    verdict = world.policy().classify("bash", {"command": command}, world.project)
    expected = [str(world.project) if t == "." else str(world.project / t) for t in targets]
    assert list(verdict.targets) == expected, command


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ("git stash", ["/w"]),
        ("git stash pop", ["/w"]),
        ("git stash drop stash@{1}", []),
        ("git stash list", []),
        ("git reset --keep main", ["/w"]),
        ("git reset --merge HEAD~2", ["/w"]),
        ("git reset a.txt", ["a.txt"]),
        ("git switch main", ["/w"]),
        ("git checkout -- HEAD", ["HEAD"]),
        ("git clone https://h/repo.git", ["repo"]),
        ("git clone https://h/repo.git dir", ["dir"]),
        ("git worktree add ../wt main", ["../wt"]),
        ("git mv a b", ["a", "b"]),
    ],
)
def test_what_git_changes_in_its_irregular_forms(command: str, changed: list[str]) -> None:
    [parsed] = analyze(command, cwd="/w").commands
    assert [w.value for w, use in touched(parsed) if use.write] == changed, command


@pytest.mark.parametrize(
    ("command", "check"),
    [
        ("git -c core.pager=sh status", "git-config"),
        ("git -c alias.st='!rm -rf ~' st", "git-config"),
        ("git --exec-path=/tmp status", "git-config"),
        ("git config core.fsmonitor ./x", "git-config"),
        ("git rebase -x 'rm -rf ~' main", "git-config"),
        ("git rebase --exe='make' main", "git-config"),
        ("git rebase -ix'rm -rf ~' main", "git-config"),
        ("git clone -u 'sh -c id' ssh://h/r", "git-config"),
        ("git clone -ccore.hooksPath=h https://h/r", "git-config"),
        ("git fetch ext::'sh -c id'", "git-config"),
        ("git bisect run rm -rf ~", "git-config"),
        ("git difftool -x vim", "git-config"),
        ("git grep -O less x", "git-config"),
        ("git apply evil.patch", "opaque-write"),
        ("git am < mail", "opaque-write"),
        ("git submodule foreach 'rm -rf ~'", "inline-code"),
        ("sudo git -c core.pager=sh log", "git-config"),
        ("xargs git -c core.editor=vim commit < /dev/null", "git-config"),
    ],
)
def test_what_git_runs_is_found(command: str, check: str) -> None:
    checks = {f.check for f in analyze(command, cwd="/w").findings}
    assert check in checks, (command, checks)


@pytest.mark.parametrize(
    "command",
    [
        "git bisect run rm -rf ~",
        "git rebase -x 'rm -rf ~' main",
        "git submodule foreach 'rm -rf ~'",
    ],
)
def test_the_command_git_runs_is_walked(command: str) -> None:
    programs = [c.program for c in analyze(command, cwd="/w").commands]
    assert programs[0] == "git"
    assert "rm" in programs, command


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git log --oneline",
        "git -c color.ui=always diff",
        "git config --get user.name",
        "git apply --check fix.patch",
        "git diff -- a.txt",
    ],
)
def test_reading_git_asks_nothing(bash: Callable[[str], Verdict], command: str) -> None:
    assert bash(command).verdict == "allow", command


def test_git_has_a_card_that_says_every_kind_of_fact() -> None:
    card = card_for("git")
    assert card is not None
    assert card.paths is not None and card.paths.reader is not None
    assert card.runs is not None
    assert {"-C", "-c", "--git-dir"} <= card.global_options
