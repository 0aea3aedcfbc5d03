"""Programs the guard runs itself: from system directories, with nothing of the user's
environment, and git with no user or system configuration, hooks or fsmonitor.

The hostile world here is what an agent could have planted through a door the rest of the
guard now closes: a ``git`` first on ``PATH``, a global git config naming hooks and an
fsmonitor, hooks in the anchor repository itself, variables that redirect git.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from guard import Guard
from guard._evidence.anchors import anchor_checkpoint, anchor_dir
from guard._hermetic import (
    GIT_SAFE_OPTIONS,
    SYSTEM_BIN_DIRS,
    ProgramNotFound,
    git_env,
    minimal_env,
    run,
    system_program,
)
from tests.guard.sidecar.test_sidecar import rpc
from tests.guard.sidecar.test_sidecar import run as run_sidecar

MARKER = "PLANTED-PROGRAM-RAN"


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def planted(marker_dir: Path, name: str) -> str:
    """A shell script that leaves ``marker_dir/name`` behind when it runs."""
    return f"#!/bin/sh\necho {MARKER} > {marker_dir / name}\nexit 0\n"


def test_a_program_is_found_in_the_system_directories() -> None:
    git = system_program("git")
    assert os.path.isabs(git)
    assert os.path.dirname(git) in SYSTEM_BIN_DIRS


def test_a_copy_in_the_home_or_writable_by_others_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    in_home = executable(home / ".local" / "bin" / "git", "#!/bin/sh\n")
    shared = executable(tmp_path / "shared" / "git", "#!/bin/sh\n")
    shared.chmod(0o777)
    dirs = (str(in_home.parent), str(shared.parent), "/usr/bin", "/bin")
    assert system_program("git", dirs) in ("/usr/bin/git", "/bin/git")
    with pytest.raises(ProgramNotFound) as refused:
        system_program("git", dirs[:2])
    assert "lies in the user's home" in str(refused.value)
    assert "writable by its group or others" in str(refused.value)
    # reached through a symlink from a system-looking place: judged by where it really is
    link_dir = tmp_path / "sys"
    link_dir.mkdir()
    (link_dir / "git").symlink_to(in_home)
    with pytest.raises(ProgramNotFound, match="lies in the user's home"):
        system_program("git", (str(link_dir),))


def test_nothing_found_and_paths_are_refused_by_name() -> None:
    with pytest.raises(ProgramNotFound, match="not in /nonexistent"):
        system_program("git", ("/nonexistent",))
    with pytest.raises(ProgramNotFound, match="not a path"):
        system_program("./git")
    with pytest.raises(ProgramNotFound, match="absolute path"):
        run(["git", "--version"])


def test_nothing_of_the_callers_environment_reaches_the_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {
        "LD_PRELOAD": "/tmp/evil.so",
        "NODE_OPTIONS": "--require /tmp/evil.js",
        "GIT_DIR": str(tmp_path),
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='/tmp/evil'",
        "PYTHONPATH": "/tmp",
        "BASH_ENV": "/tmp/evil.sh",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    done = run([system_program("env")])
    seen = dict(line.split("=", 1) for line in done.stdout.decode().splitlines() if "=" in line)
    assert set(seen) == set(minimal_env())
    assert seen["PATH"] == "/usr/bin:/bin:/usr/sbin:/sbin"
    assert not os.listdir(seen["HOME"])  # an empty home: no dotfile is read
    cwd = run([system_program("pwd")]).stdout.decode().strip()
    assert cwd == seen["HOME"]  # never the caller's directory (the workspace)
    assert git_env()["GIT_CONFIG_GLOBAL"] == os.devnull
    assert git_env()["GIT_CONFIG_NOSYSTEM"] == "1"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home and environment an agent armed, and an anchor repository with hooks."""
    marks = tmp_path / "marks"
    marks.mkdir()
    user_home = tmp_path / "user"
    evil_hooks = user_home / "hooks"
    for hook in ("pre-commit", "post-commit", "commit-msg", "reference-transaction"):
        executable(evil_hooks / hook, planted(marks, f"global-{hook}"))
    fsmonitor = executable(user_home / "fsmonitor.sh", planted(marks, "fsmonitor"))
    (user_home / ".gitconfig").write_text(
        f"[core]\n\thooksPath = {evil_hooks}\n\tfsmonitor = {fsmonitor}\n"
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {fsmonitor}\n"
        f'[filter "evil"]\n\tclean = {fsmonitor}\n'
    )
    xdg = user_home / ".config" / "git"
    xdg.mkdir(parents=True)
    (xdg / "config").write_text(f"[core]\n\thooksPath = {evil_hooks}\n")
    (xdg / "attributes").write_text("* filter=evil\n")
    fake_bin = user_home / ".local" / "bin"
    executable(fake_bin / "git", planted(marks, "path-git"))
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", f"{fake_bin}:{os.environ['PATH']}")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_EXEC_PATH", str(fake_bin))

    anchors = tmp_path / "anchors"
    git = system_program("git")
    subprocess.run(
        [git, "init", "-q", str(anchors)],
        check=True,
        env=git_env(),
        capture_output=True,
    )
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-index-change"):
        executable(anchors / ".git" / "hooks" / hook, planted(marks, f"repo-{hook}"))
    (anchors / ".gitattributes").write_text("* filter=evil\n")
    monkeypatch.setenv("PI_OPERATOR_GUARD_ANCHOR_DIR", str(anchors))
    return {"marks": marks, "anchors": anchors, "home": tmp_path / "guard-home"}


def git_log(anchors: Path) -> list[str]:
    done = run([system_program("git"), "-C", str(anchors), "log", "--format=%s"], env=git_env())
    return done.stdout.decode().split("\n")


def test_the_anchor_commit_runs_nothing_the_agent_planted(hostile: dict[str, Path]) -> None:
    run_sidecar(hostile["home"], rpc("health"))  # the sidecar anchors at start and end
    assert git_log(hostile["anchors"])[0].startswith("checkpoint log_")
    assert sorted(p.name for p in hostile["marks"].iterdir()) == []
    # the committed file is the checkpoint as written (no clean filter ran over it)
    anchored = sorted(hostile["anchors"].rglob("*.checkpoint"))
    assert anchored
    show = run(
        [system_program("git"), "-C", str(hostile["anchors"]), "show", "HEAD:" +
         str(anchored[-1].relative_to(hostile["anchors"]))],
        env=git_env(),
    )  # fmt: skip
    assert show.stdout == anchored[-1].read_bytes()


def test_a_second_anchor_is_a_second_commit_on_the_first(hostile: dict[str, Path]) -> None:
    with Guard.open(hostile["home"]) as guard:
        keys = guard.public_keyring().public_keys()
        directory = anchor_dir()
        assert directory is not None
        first = anchor_checkpoint(directory, guard.audit.path, keys)
        guard.evaluate("bash", {"command": "rm -rf build"}, str(hostile["home"]))
        guard.record("bash", {"command": "rm -rf x"}, str(hostile["home"]), confirmed=False)
        second = anchor_checkpoint(directory, guard.audit.path, keys)
    assert (first.committed, second.committed) == (True, True)
    assert (first.git_problem, second.git_problem) == (None, None)
    assert len([s for s in git_log(hostile["anchors"]) if s]) == 2
    status = run(
        [system_program("git"), "-C", str(hostile["anchors"]), "status", "--porcelain"],
        env=git_env({"GIT_CONFIG_PARAMETERS": "'core.hooksPath'='/dev/null'"}),
    )
    # everything anchored is committed and staged as committed (.gitattributes was there)
    assert [ln for ln in status.stdout.decode().splitlines() if "checkpoint" in ln] == []
    assert not list(hostile["marks"].iterdir())


_REPORT_HOME = """
import os, sys
from guard._hermetic import minimal_env
home = minimal_env()["HOME"]
print(home, flush=True)
if sys.argv[1] == "fork":
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a child that exits normally runs the inherited exit handlers
    os.waitpid(child, 0)
    print(os.path.isdir(home), flush=True)
"""


def test_the_empty_home_is_removed_when_the_process_exits() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _REPORT_HOME, "plain"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0].startswith(tempfile.gettempdir())
    assert not os.path.exists(out[0])


def test_a_forked_child_leaves_the_empty_home_to_its_parent() -> None:
    home, alive_after_child = subprocess.run(
        [sys.executable, "-c", _REPORT_HOME, "fork"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert alive_after_child == "True"
    assert not os.path.exists(home)


# -- tests that notice a loosened default (issue: "holes found by attacking") -----------------


@pytest.mark.parametrize("name", ["LD_PRELOAD", "GIT_CONFIG_PARAMETERS", "NODE_OPTIONS", "GIT_DIR"])
def test_minimal_env_keeps_none_of_the_callers_variables(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Compared with what the guard sets, not with ``minimal_env()`` itself: a
    ``minimal_env`` that inherited the caller's environment would pass a self-comparison."""
    monkeypatch.setenv(name, "/tmp/planted")
    env = minimal_env()
    assert name not in env
    assert set(env) == {"PATH", "LC_ALL", "LANG", "HOME", "TMPDIR"}
    assert set(git_env()) - set(env) == {
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_ATTR_NOSYSTEM", "GIT_TERMINAL_PROMPT",
        "GIT_PAGER", "GIT_EDITOR", "XDG_CONFIG_HOME",
    }  # fmt: skip


def test_an_fsmonitor_in_the_repositorys_own_config_does_not_run(tmp_path: Path) -> None:
    """The anchor repository's own ``.git/config`` names an fsmonitor (not the user's
    ``~/.gitconfig``, which the hermetic environment never reads): git runs nothing."""
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = tmp_path / "repo"
    git = system_program("git")
    subprocess.run([git, "init", "-q", str(repo)], check=True, env=git_env(), capture_output=True)
    monitor = executable(tmp_path / "fsmonitor.sh", planted(marks, "fsmonitor"))
    with (repo / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {monitor}\n\thooksPath = {tmp_path / 'hooks'}\n")
    executable(tmp_path / "hooks" / "post-index-change", planted(marks, "hook"))
    (repo / "a.txt").write_text("a\n")
    for args in (["status", "--porcelain"], ["add", "a.txt"], ["diff", "--cached"]):
        run([git, *GIT_SAFE_OPTIONS, "-C", str(repo), *args], env=git_env())
    assert sorted(p.name for p in marks.iterdir()) == []


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o770, 0o777])
def test_a_program_writable_by_its_group_or_others_is_never_run(tmp_path: Path, mode: int) -> None:
    copy = executable(tmp_path / "bin" / "git", "#!/bin/sh\n")
    copy.chmod(mode)
    with pytest.raises(ProgramNotFound, match="writable by its group or others"):
        system_program("git", (str(copy.parent),))
    copy.chmod(0o755)
    assert system_program("git", (str(copy.parent),)) == str(copy)
