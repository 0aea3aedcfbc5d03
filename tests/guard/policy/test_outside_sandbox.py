"""The doors around the sandbox, as the policy sees them: pi's file tools (and a shell, which
the sandbox also stops) writing what later runs outside it, reading credentials, writing
outside the session's writable set.

Every spelling a hostile agent could use through the file tools is tried: the path as is,
with ``~``, with pi's ``@`` prefix, through a symlink in the workspace, by ``..``; and the
same place from bash (echo, tee, cp, mv -t, ln, sed -i, python).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from guard._policy import Policy
from guard._policy.settings.installation import installation_paths
from guard._policy.settings.surroundings import git_user_files, path_dirs, pi_installation
from tests.guard.policy.conftest import World
from tests.guard.policy.corpus_outside import CREDENTIALS, RUNS_CODE, expand

BLOCK_RULE = "builtin.runs-outside-sandbox"


def write(policy: Policy, world: World, path: str, tool: str = "write") -> tuple[str, tuple]:
    payload = {"path": path, "content": "x"} if tool == "write" else {"path": path, "edits": []}
    verdict = policy.classify(tool, payload, world.project)
    return verdict.verdict, verdict.rule_ids


@pytest.mark.parametrize(("place", "source"), RUNS_CODE, ids=[p for p, _ in RUNS_CODE])
def test_a_file_tool_never_writes_what_runs_outside(world: World, place: str, source: str) -> None:
    policy = world.policy()
    path = expand(place, str(world.home))
    spellings = [path]
    if place.startswith("~/"):
        spellings += [place, "@" + place]
    for spelling in spellings:
        for tool in ("write", "edit"):
            verdict, rules = write(policy, world, spelling, tool)
            assert verdict == "block", (spelling, tool, source)
            assert BLOCK_RULE in rules, (spelling, rules)


@pytest.mark.parametrize(("place", "source"), RUNS_CODE[:40], ids=[p for p, _ in RUNS_CODE[:40]])
def test_a_link_in_the_workspace_does_not_reach_it(world: World, place: str, source: str) -> None:
    target = Path(expand(place, str(world.home)))
    (world.project / "innocent").symlink_to(target.parent, target_is_directory=True)
    (world.project / "notes.md").symlink_to(target)
    policy = world.policy()
    for spelling in (f"innocent/{target.name}", "notes.md", f"sub/../innocent/{target.name}"):
        verdict, rules = write(policy, world, spelling)
        assert verdict == "block", (spelling, source, rules)


@pytest.mark.parametrize(
    "template",
    [
        "echo evil >> {p}",
        "printf 'x' > {p}",
        "tee -a {p} < /dev/null",
        "cp payload {p}",
        "mv payload {p}",
        "ln -sf /tmp/evil {p}",
        "install -m 755 payload {p}",
        "sed -i s/a/b/ {p}",
        "truncate -s 0 {p}",
        "dd of={p} if=payload",
        "rsync payload {p}",
    ],
)
def test_bash_spellings_are_blocked_too(world: World, template: str) -> None:
    policy = world.policy()
    for place in ("~/.bashrc", "~/.gitconfig", "~/.local/bin/git", "~/.pi/agent/trust.json"):
        command = template.format(p=place)
        verdict = policy.classify("bash", {"command": command}, world.project)
        assert verdict.verdict == "block", (command, verdict.rule_ids)


def test_mv_into_the_extension_directory_is_blocked(world: World) -> None:
    extension = world.home / ".pi" / "agent" / "extensions" / "operator-guard"
    policy = world.policy()
    for command in (
        f"mv -t {extension} index.ts",
        f"mv --target-directory={extension} index.ts",
        f"cp -t {extension} index.ts",
        f"install -t {extension} index.ts",
    ):
        verdict = policy.classify("bash", {"command": command}, world.project)
        assert verdict.verdict == "block", (command, verdict.rule_ids)


def test_reading_what_runs_outside_is_not_asked(world: World) -> None:
    """Only writes are the door; a read of ~/.bashrc or ~/.gitconfig asks nobody."""
    policy = world.policy()
    for place in ("~/.bashrc", "~/.gitconfig", "$CONFIG/git/config", "~/.vimrc", "/etc/hosts"):
        verdict = policy.classify("read", {"path": expand(place, str(world.home))}, world.project)
        assert verdict.verdict == "allow", (place, verdict.rule_ids)


@pytest.mark.parametrize(("place", "source"), CREDENTIALS, ids=[p for p, _ in CREDENTIALS])
def test_reading_a_credential_asks(world: World, place: str, source: str) -> None:
    policy = world.policy()
    path = expand(place, str(world.home))
    for tool in ("read", "grep"):
        verdict = policy.classify(tool, {"path": path, "pattern": "x"}, world.project)
        assert verdict.verdict == "confirm", (tool, place, source)
        assert verdict.action_kind == "protected"
    bash = policy.classify("bash", {"command": f"cat {path}"}, world.project)
    assert bash.verdict == "confirm", (place, bash.rule_ids)


def test_reading_a_directory_that_holds_credentials_asks(world: World) -> None:
    """pi's grep searches contents beneath its path: the home holds ~/.ssh, ~/.aws …"""
    policy = world.policy()
    listing = policy.classify("ls", {"path": "~/.ssh"}, world.project)
    assert listing.verdict == "confirm"
    for tool, payload in (("grep", {"path": "~", "pattern": "k"}), ("bash", {"command": "grep -r k ~"}),
                          ("bash", {"command": "tar czf /tmp/h.tgz ~"}),
                          ("bash", {"command": f"cp -r {world.home} /tmp/copy"})):  # fmt: skip
        verdict = policy.classify(tool, payload, world.project)
        assert verdict.verdict != "allow", payload
        assert {"builtin.ssh", "builtin.credentials", "builtin.pi-auth"} <= set(verdict.rule_ids)
    workspace = policy.classify("grep", {"path": ".", "pattern": "TODO"}, world.project)
    assert workspace.verdict == "allow"


# -- derived from this machine: PATH, pi and Node, the user's git config -----------------------


def test_every_path_directory_is_derived_and_blocked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = world.home / "opt" / "tools" / "bin"
    tools.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{tools}:relative/bin::/usr/bin")
    dirs = path_dirs(dict(os.environ))
    assert str(tools) in dirs
    assert not [d for d in dirs if not d.startswith("/")]  # relative entries are not places
    assert {str(world.home / ".local" / "bin"), str(world.home / "bin")} <= set(dirs)
    verdict, rules = write(world.policy(), world, str(tools / "git"))
    assert (verdict, BLOCK_RULE in rules) == ("block", True)


def fake_pi(root: Path, name: str = "@earendil-works/pi-coding-agent") -> tuple[Path, Path]:
    """A pi package in ``root/node_modules`` with a ``pi`` entry in ``root/bin``."""
    package = root / "node_modules" / name
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": name, "version": "9.9.9"}))
    (package / "dist" / "cli.js").write_text("#!/usr/bin/env node\n")
    (package / "dist" / "cli.js").chmod(0o755)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "pi").symlink_to(package / "dist" / "cli.js")
    return package, bin_dir


def test_pis_installation_is_found_from_path_and_blocked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    package, bin_dir = fake_pi(world.home / ".npm-global" / "lib")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    found = pi_installation(dict(os.environ), parent=os.getpid())
    assert str(package) in found
    assert str(package.parent.parent) in found  # node_modules: pi's dependencies
    policy = world.policy()
    for target in (
        package / "dist" / "cli.js",
        package / "dist" / "planted.js",
        package.parent.parent / "some-dependency" / "index.js",
    ):
        verdict, rules = write(policy, world, str(target))
        assert (verdict, BLOCK_RULE in rules) == ("block", True), target


def test_pis_installation_is_found_from_the_process_that_started_the_guard(
    tmp_path: Path,
) -> None:
    """The sidecar's parent is pi: its script names pi's package, whatever PATH says."""
    import subprocess

    package, _ = fake_pi(tmp_path / "pi")
    script = package / "dist" / "child.py"
    code = (
        "import os, sys, json; sys.path.insert(0, sys.argv[1]);"
        "from guard._policy.settings.surroundings import pi_installation;"
        "print(json.dumps(pi_installation({'PATH': ''})))"
    )
    # A parent whose executable is named node* and whose argv[1] is a script in pi.
    node_like = tmp_path / "node"
    node_like.symlink_to(sys.executable)
    script.write_text(
        f"import subprocess, sys\n"
        f"print(subprocess.run([{sys.executable!r}, '-c', {code!r}, "
        f"{str(Path(__file__).resolve().parents[3])!r}], capture_output=True, text=True).stdout)\n"
    )
    done = subprocess.run(
        [str(node_like), str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(done.stdout.strip())
    assert str(package) in found, done


def test_the_node_that_runs_pi_is_blocked(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = world.home / ".nvm" / "versions" / "node" / "v22.0.0"
    (prefix / "bin").mkdir(parents=True)
    node = prefix / "bin" / "node"
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", f"{prefix / 'bin'}:/usr/bin:/bin")
    policy = world.policy()
    for target in (node, prefix / "lib" / "node_modules" / "npm" / "index.js"):
        verdict, rules = write(policy, world, str(target))
        assert (verdict, BLOCK_RULE in rules) == ("block", True), target


def test_what_the_users_git_config_names_is_derived_and_blocked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = world.home / "dotfiles" / "githooks"
    work = world.home / "dotfiles" / "work.gitconfig"
    work.parent.mkdir(parents=True)
    work.write_text('[core]\n\tfsmonitor = "~/dotfiles/fsmon.sh"\n')
    (world.home / ".gitconfig").write_text(
        "[user]\n\tname = Op\n"
        f"[core]\n\thooksPath = {hooks}   # shared hooks\n"
        "[include]\n\tpath = dotfiles/work.gitconfig\n"
        '[includeIf "gitdir:~/oss/"]\n\tpath = ~/dotfiles/oss.gitconfig\n'
        "[alias]\n\tst = !~/dotfiles/bin/st.sh\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(world.home / "alt.gitconfig"))
    found = set(git_user_files(dict(os.environ)))
    expected = {
        str(hooks),
        str(work),
        str(world.home / "dotfiles" / "fsmon.sh"),
        str(world.home / "dotfiles" / "oss.gitconfig"),
        str(world.home / "dotfiles" / "bin" / "st.sh"),
        str(world.home / "alt.gitconfig"),
    }
    assert expected <= found
    policy = world.policy()
    for path in [*expected, str(hooks / "pre-commit")]:
        verdict, rules = write(policy, world, path)
        assert (verdict, BLOCK_RULE in rules) == ("block", True), path


def test_xdg_locations_are_where_the_tools_look(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = world.home / "cfg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("ZDOTDIR", str(world.home / "zsh"))
    policy = world.policy()
    for path in (config / "git" / "config", world.home / "zsh" / ".zshrc", config / "fish" / "x"):
        verdict, rules = write(policy, world, str(path))
        assert (verdict, BLOCK_RULE in rules) == ("block", True), path


def test_the_guards_own_files_are_never_writable(world: World) -> None:
    """Every file of the running guard's packages (a source or editable install too)."""
    policy = world.policy()
    places = installation_paths()
    for name in ("GUARD_PACKAGE", "AUDIT_PACKAGE", "PLANNING_PACKAGE"):
        package = Path(places[name])
        for source in [package / "__init__.py", *sorted(package.rglob("*.py"))[:5]]:
            for tool in ("write", "edit"):
                verdict, rules = write(policy, world, str(source), tool)
                assert verdict == "block", (source, rules)
                assert "builtin.guard-installation" in rules, (source, rules)
    shim = Path(places["GUARD_PACKAGE"]) / "_pi" / "extension" / "index.ts"
    assert write(policy, world, str(shim))[0] == "block"


# -- the session's writable set ----------------------------------------------------------------


def test_a_write_outside_the_workspace_asks_and_names_the_place(world: World) -> None:
    sibling = world.project.parent / "sibling-project"
    sibling.mkdir()
    policy = world.policy()
    for spelling in (str(sibling / "main.c"), "../sibling-project/main.c", "/tmp/patch.diff"):
        verdict = policy.classify("write", {"path": spelling, "content": "x"}, world.project)
        assert verdict.verdict == "confirm", spelling
        assert verdict.rule_ids == ("builtin.outside-workspace",)
        assert verdict.action_kind == "protected"
        assert any(os.path.normpath(str(world.project / spelling)) in r or spelling in r
                   for r in verdict.reasons)  # fmt: skip
    inside = policy.classify("write", {"path": "src/main.c", "content": "x"}, world.project)
    assert inside.verdict == "allow"


def test_a_link_out_of_the_workspace_is_outside(world: World) -> None:
    sibling = world.project.parent / "sibling"
    sibling.mkdir()
    (world.project / "out").symlink_to(sibling, target_is_directory=True)
    verdict = world.policy().classify("edit", {"path": "out/x.c", "edits": []}, world.project)
    assert verdict.verdict == "confirm"
    assert "really" in verdict.reasons[0] and str(sibling) in verdict.reasons[0]


def test_the_users_writable_paths_extend_the_set(world: World) -> None:
    notes = world.home / "notes"
    notes.mkdir()
    world.user_config(f'[sandbox]\nwritable = ["~/notes", "{world.project.parent}/shared"]\n')
    policy = world.policy()
    ok = policy.classify("write", {"path": str(notes / "todo.md"), "content": "x"}, world.project)
    assert ok.verdict == "allow"
    still = policy.classify(
        "write", {"path": str(world.home / "x.md"), "content": ""}, world.project
    )
    assert still.verdict == "confirm"


def test_a_project_file_cannot_extend_the_set(world: World) -> None:
    world.project_config(f'[sandbox]\nwritable = ["{world.home}"]\n')
    verdict = world.policy().classify(
        "write", {"path": str(world.home / "x.md"), "content": ""}, world.project
    )
    assert verdict.verdict == "confirm"


@pytest.mark.parametrize("where", ["home", "root", "parent"])
def test_started_in_the_home_every_write_asks(
    world: World, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    cwd = {"home": world.home, "root": Path("/"), "parent": world.home.parent}[where]
    policy = Policy.load(world.guard_home, cwd)
    for path in (str(world.home / "notes.txt"), str(world.home / "project" / "a.py")):
        verdict = policy.classify("write", {"path": path, "content": "x"}, cwd)
        assert verdict.verdict == "confirm", (where, path)
        assert "start pi in a project folder" in " ".join(verdict.reasons)


def test_the_user_may_relax_the_ask_for_a_place(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.scratch"\nverdict = "allow"\n'
        'relaxes = ["builtin.outside-workspace"]\npaths = ["/tmp/scratch"]\n'
    )
    policy = world.policy()
    ok = policy.classify("write", {"path": "/tmp/scratch/a", "content": ""}, world.project)
    assert ok.verdict == "allow"
    assert ok.rule_ids == ("me.scratch",)
    other = policy.classify("write", {"path": "/tmp/other", "content": ""}, world.project)
    assert other.verdict == "confirm"


def test_a_relaxing_rule_never_opens_what_runs_outside(world: World) -> None:
    world.user_config(
        '[[rule]]\nid = "me.home"\nverdict = "allow"\n'
        'relaxes = ["builtin.outside-workspace", "builtin.runs-outside-sandbox"]\n'
        'paths = ["~"]\n'
    )
    policy = world.policy()
    assert [p for p in policy.problems if "runs-outside-sandbox" in p.message]
    verdict, _ = write(policy, world, "~/.bashrc")
    assert verdict == "block"


def test_a_read_only_file_mode_is_no_way_around(world: World) -> None:
    """The verdict does not depend on whether the file exists or can be written."""
    target = world.home / ".bashrc"
    target.write_text("# mine\n")
    target.chmod(stat.S_IRUSR)
    assert write(world.policy(), world, "~/.bashrc")[0] == "block"
    target.unlink()
    assert write(world.policy(), world, "~/.bashrc")[0] == "block"


@pytest.mark.parametrize(
    "command",
    [
        'rm -rf --no-preserve-root "$D"',
        "rm -r --no-preserve-root build",
        "D=/; rm -rf --no-preserve-root $D",
        "command rm -fr --no-preserve-root -- x",
    ],
)
def test_no_preserve_root_is_blocked_whatever_the_operand(world: World, command: str) -> None:
    """The flag itself says "/ may go": blocked even where the operand is unknown (which
    alone would only ask)."""
    verdict = world.policy().classify("bash", {"command": command}, world.project)
    assert verdict.verdict == "block", verdict.rule_ids
    assert verdict.rule_ids[0] == "builtin.catastrophic-target"


STRICTNESS = {"allow": 0, "confirm": 1, "block": 2}
NEWLINE_NAMES = ("x\ny", "x\n", "\nx", "x\r\ny")


def _places(world: World) -> list[str]:
    """Every protected place of the corpus, the guard home and the project's own."""
    home = str(world.home)
    project = world.project
    ours = [".pi/extensions", ".pi/extensions/tool", ".git", ".git/hooks", ".vscode", ".env"]
    return [
        *(expand(place, home) for place, _ in (*RUNS_CODE, *CREDENTIALS)),
        str(world.guard_home),
        *(str(project / name) for name in ours),
    ]


@pytest.mark.slow  # every protected place with a newline, through every tool
def test_a_newline_in_a_name_takes_no_path_out_of_its_rule(world: World) -> None:
    """A name may hold a newline (or a CR): ``~/.ssh/a<LF>b`` once matched no rule of
    ``~/.ssh``, and the project's ``.pi/extensions/x<LF>y/index.ts`` was written with no
    dialog by pi's write tool, which runs outside the sandbox; pi would load it at its next
    start. Every tool must judge such a path as it judges the same path without the newline.
    """
    policy = world.policy()
    cwd = world.project
    escaped: list[str] = []
    for place in _places(world):
        for name in NEWLINE_NAMES:
            plain = name.replace("\r", "").replace("\n", "")
            for tail in ("", "/index.ts"):
                odd, even = f"{place}/{name}{tail}", f"{place}/{plain}{tail}"
                calls = [
                    ("write", {"path": odd, "content": "x"}, {"path": even, "content": "x"}),
                    ("edit", {"path": odd, "edits": []}, {"path": even, "edits": []}),
                    ("read", {"path": odd}, {"path": even}),
                    (
                        "bash",
                        {"command": f"echo x > {_quoted(odd)}"},
                        {"command": f"echo x > {_quoted(even)}"},
                    ),
                    (
                        "bash",
                        {"command": f"cat {_quoted(odd)}"},
                        {"command": f"cat {_quoted(even)}"},
                    ),
                ]
                for tool, odd_input, even_input in calls:
                    got = policy.classify(tool, odd_input, cwd)
                    want = policy.classify(tool, even_input, cwd)
                    weaker = STRICTNESS[got.verdict] < STRICTNESS[want.verdict]
                    if weaker or not set(want.rule_ids) <= set(got.rule_ids):
                        escaped.append(f"{tool} {odd!r}: {got.verdict} {got.rule_ids}")
    assert escaped == []


def _quoted(path: str) -> str:
    """``path`` as bash's ``$'…'`` quoting spells it (newline and CR escaped)."""
    body = path.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return f"$'{body}'"


@pytest.mark.parametrize("tmpdir", [None, "elsewhere"])
def test_the_compiled_code_pi_runs_at_its_next_start_is_never_writable(
    world: World, monkeypatch: pytest.MonkeyPatch, tmpdir: str | None
) -> None:
    """pi loads every extension's TypeScript (the guard's shim too) through jiti, which takes
    ``<tmpdir>/jiti/<dir>-<name>.<hash of the path>.mjs`` in place of the source when it ends
    with the source's hash, and Node's compile cache holds the code pi itself runs. Writing
    either with pi's file tools would replace the guard at pi's next start, outside the
    sandbox: blocked, in every spelling, for Node's tmpdir wherever ``$TMPDIR`` puts it."""
    tmp = "/tmp"
    for name in ("TMPDIR", "TMP", "TEMP"):
        monkeypatch.delenv(name, raising=False)
    if tmpdir is not None:
        tmp = str(world.home / tmpdir / "t")
        monkeypatch.setenv("TMPDIR", tmp + "/")
    monkeypatch.setenv("NODE_COMPILE_CACHE", str(world.home / "ncc"))
    policy = world.policy()
    places = [
        f"{tmp}/jiti/operator-guard-index.1f2e3d4c.mjs",
        f"{tmp}/jiti",
        f"{tmp}/JITI/operator-guard-sidecar.0a0b0c0d.mjs",
        f"{tmp}/node-compile-cache/v22.23.3-x64-9ac5647c-0/0014384c",
        f"{tmp}//jiti/./x.mjs",
        f"{tmp}/elsewhere/../jiti/x.mjs",
        str(world.home / "ncc" / "v22" / "cafe"),
    ]
    for place in places:
        for tool in ("write", "edit"):
            for spelling in (place, "@" + place):  # pi's @ prefix
                verdict, rules = write(policy, world, spelling, tool)
                assert (verdict, BLOCK_RULE in rules) == ("block", True), (spelling, tool, rules)
        for command in (f"cp payload {place}", f"echo x > {place}", f"tee {place} < /dev/null"):
            verdict_ = policy.classify("bash", {"command": command}, world.project)
            assert verdict_.verdict == "block", (command, verdict_.rule_ids)
    (world.project / "cache").symlink_to(f"{tmp}/jiti", target_is_directory=True)
    verdict, rules = write(policy, world, "cache/operator-guard-index.1f2e3d4c.mjs")
    assert (verdict, BLOCK_RULE in rules) == ("block", True), rules
    # Only the caches: the rest of the tmpdir is outside the workspace, asked as ever.
    for place in (f"{tmp}/jitify.txt", f"{tmp}/notes/jiti.txt"):
        verdict, rules = write(policy, world, place)
        assert (verdict, BLOCK_RULE in rules) == ("confirm", False), (place, rules)
