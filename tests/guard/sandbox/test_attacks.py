"""A hostile agent against the real sandbox: real bwrap, real processes, no mocks.

Every attack runs as one agent bash command through the spawn-hook transform. Reads of the
guard's secrets must never print them; writes to the guard's installation must leave the
host's files untouched; processes outside must stay invisible and alive; processes inside
must die with the command.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import guard
from tests.guard.sandbox.conftest import (
    AUTH_SECRET,
    SECRET,
    Layout,
    make_layout,
    needs_bwrap,
    run_proved,
)

pytestmark = [pytest.mark.integration, needs_bwrap]

PY = sys.executable
REPO = Path(__file__).resolve().parents[3]


def key_read_attacks(key: Path, workspace: Path) -> list[str]:
    home = key.parent
    parent = home.parent
    return [
        f"cat {key}",
        f"cat '{key}'",
        f'H={home}/; cat "${{H%/}}/signing.key"',
        f'd="$(dirname {key})"; cat "$d/signing.key"',
        f"P={parent}; cat $P/{home.name}/signing.key",
        f"cat {home}/{{signing,nothing}}.key",
        f"cat {home}/sign*.key",
        f"cd {home} && cat signing.key",
        f"CDPATH={parent} cd {home.name} && cat signing.key",
        f"ln -s {key} k && cat k",
        f"ln -s {home} h && cat h/signing.key",
        f"ln {key} hard && cat hard",
        f"cp {key} {workspace}/copy && cat {workspace}/copy",
        f"cat /proc/self/root{key}",
        f"cat /proc/1/root{key}",
        f"cat /proc/$$/root{key}",
        f"tar -C {home} -cf - . | tar -xOf -",
        f"tar -cf - -C {parent} {home.name} | tar -xOf -",
        f"find {parent} -name signing.key -exec cat {{}} \\;",
        "find / -xdev -name signing.key 2>/dev/null | xargs cat",
        f"grep -r . {home}",
        f"{PY} -c \"print(open('{key}').read())\"",
        f"{PY} -c \"import os; print(os.listdir('{home}'))\"; {PY} -c \"print(open('{key}').read())\"",
        f"{PY} -c \"import pathlib; print(pathlib.Path('{key}').read_text())\"",
        f"dd if={key} 2>/dev/null",
        f"base64 {key} | base64 -d",
        f"exec 3<{key}; cat <&3",
        f"umount {home}; cat {key}",
        f"umount -l {home} 2>&1; cat {key}",
        f"mount -o remount,rw / 2>&1; cat {key}",
        f"unshare -rm sh -c 'umount {home}; cat {key}'",
        f"nsenter -t 1 -m cat {key}",
        f"cat {key}.orig {key}~ 2>/dev/null; ls -la {home}",
        f"cat /proc/mounts; cat {key}",
        f'for f in {home}/*; do cat "$f"; done',
        f"mv {home} {workspace}/stolen 2>&1; cat {workspace}/stolen/signing.key",
    ]


def assert_no_secret(result: subprocess.CompletedProcess[str], secret: str = SECRET) -> None:
    assert secret not in result.stdout and secret not in result.stderr, result


@pytest.mark.parametrize("index", range(len(key_read_attacks(Path("/h/k"), Path("/w")))))
def test_signing_key_cannot_be_read(layout: Layout, index: int) -> None:
    attack = key_read_attacks(layout.key, layout.workspace)[index]
    assert_no_secret(run_proved(layout, attack))
    assert layout.key.read_text().startswith(SECRET)  # nothing moved on the host


def test_home_inside_the_workspace_is_hidden_too(tmp_path: Path) -> None:
    world = make_layout(tmp_path, home=tmp_path / "workspace" / ".guard")
    for attack in key_read_attacks(world.key, world.workspace):
        assert_no_secret(run_proved(world, attack))
    listing = world.run(f"ls -A {world.home}; echo > {world.home}/planted; ls -A {world.home}")
    assert listing.stdout.strip() == ""
    assert sorted(p.name for p in world.home.iterdir()) == [
        "keyring.json",
        "operator-guard.toml",
        "signing.key",
    ]


def test_home_reached_through_a_symlink_is_hidden(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    world = make_layout(tmp_path, home=real)
    link = world.workspace / "home-link"
    link.symlink_to(real)
    world.home = link  # the guard was told the symlink; the sandbox hides its target
    assert_no_secret(run_proved(world, f"cat {link}/signing.key; cat {real}/signing.key"))


def test_pi_credentials_are_hidden_and_agent_dir_read_only(layout: Layout) -> None:
    result = run_proved(layout, f"cat {layout.agent}/auth.json; ls {layout.agent}")
    assert_no_secret(result, AUTH_SECRET)
    assert "settings.json" in result.stdout  # the rest of the agent dir is readable
    layout.run(f'echo \'{{"packages":["evil"]}}\' > {layout.agent}/settings.json')
    assert (layout.agent / "settings.json").read_text() == "{}\n"


@pytest.fixture
def site_packages() -> Iterator[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    planted = [site / "zz_sandbox_attack.pth", site / "zz_sandbox_attack.py"]
    yield site
    for path in planted:
        path.unlink(missing_ok=True)


def write_attacks(target_dir: Path, name: str) -> list[str]:
    target = target_dir / name
    return [
        f"echo 'import os' > {target}",
        f"touch {target}",
        f"cp /etc/hostname {target}",
        f"{PY} -c \"open('{target}', 'w').write('import os')\"",
        f"ln -s /etc/hostname {target}",
        f"tar -cf .t.tar -C /etc hostname && tar -xf .t.tar -C {target_dir} --transform 's/.*/{name}/'",
        f"mkdir -p .x && echo x > .x/{name} && mv .x/{name} {target_dir}/",
        f"sed -n 'w {target}' /etc/hostname",
        f"chmod u+w {target_dir}; echo > {target}",
    ]


def test_site_packages_cannot_get_a_pth(layout: Layout, site_packages: Path) -> None:
    for attack in write_attacks(site_packages, "zz_sandbox_attack.pth"):
        layout.run(attack)
        assert not (site_packages / "zz_sandbox_attack.pth").exists(), attack
    layout.run(f"echo 'import os' > {site_packages}/zz_sandbox_attack.py")
    assert not (site_packages / "zz_sandbox_attack.py").exists()


def test_guard_package_cannot_be_written(layout: Layout) -> None:
    package = Path(guard.__file__).parent
    before = (package / "__init__.py").read_bytes()
    name = f"zz_attack_{uuid.uuid4().hex}.py"
    try:
        for attack in write_attacks(package, name):
            layout.run(attack)
            assert not (package / name).exists(), attack
        layout.run(f"echo 'raise SystemExit' >> {package}/__init__.py")
        layout.run(f"{PY} -c \"open('{package}/__init__.py', 'a').write('#x')\"")
    finally:
        (package / name).unlink(missing_ok=True)
    assert (package / "__init__.py").read_bytes() == before


@pytest.mark.parametrize("where", ["agent", "project"])
def test_extension_files_cannot_be_written(layout: Layout, where: str) -> None:
    base = layout.agent if where == "agent" else layout.workspace / ".pi"
    ext = base / "extensions" / "operator-guard"
    before = {p.name: p.read_bytes() for p in ext.iterdir()}
    attacks = [
        f"echo 'export default () => {{}}' > {ext}/index.ts",
        f"echo '{{}}' > {ext}/guard.json",
        f"rm -f {ext}/guard.json",
        f"mv {ext} {base}/extensions/gone",
        f"rm -rf {base}/extensions",
        f"mkdir -p {base}/extensions/evil && echo 'x' > {base}/extensions/evil/index.ts",
        f"{PY} -c \"import shutil; shutil.rmtree('{ext}')\"",
        f'echo \'{{"extensions": ["/tmp/evil"]}}\' > {base}/settings.json',
    ]
    for attack in attacks:
        layout.run(attack)
        assert {p.name: p.read_bytes() for p in ext.iterdir()} == before, attack
    assert not (base / "extensions" / "evil").exists()
    if where == "project":
        assert not (base / "settings.json").exists()


def test_project_pi_dir_is_kept_absent_and_read_only(tmp_path: Path) -> None:
    world = make_layout(tmp_path)
    import shutil

    shutil.rmtree(world.workspace / ".pi")
    world.run("mkdir -p .pi/extensions/evil && echo x > .pi/extensions/evil/index.ts")
    assert not (world.workspace / ".pi" / "extensions").exists()


def test_user_policy_cannot_be_written(layout: Layout) -> None:
    policy = layout.home / "operator-guard.toml"
    before = policy.read_bytes()
    for attack in (
        f"printf '[[rule]]\\nid=\"me.x\"\\n' >> {policy}",
        f"{PY} -c \"open('{policy}', 'a').write('x')\"",
        f"rm -f {policy}",
    ):
        layout.run(attack)
    assert policy.read_bytes() == before


def test_venv_and_package_inside_the_workspace_stay_read_only(layout: Layout) -> None:
    # The repository as workspace: it holds the guard's own venv and packages.
    repo = REPO
    layout.workspace = repo
    session = layout.plan()
    marker = f"zz-sandbox-write-{uuid.uuid4().hex}"
    had_pi = (repo / ".pi").exists()
    try:
        result = layout.run(f"echo ok > {marker} && cat {marker}", session=session)
        assert result.stdout.strip() == "ok"
        assert (repo / marker).exists()  # the workspace itself is writable
        site = Path(sysconfig.get_paths()["purelib"])
        if site.is_relative_to(repo):
            layout.run(f"echo 'import os' > {site}/{marker}.pth", session=session)
            assert not (site / f"{marker}.pth").exists()
        layout.run(
            f"touch guard/{marker}.py audit/{marker}.py planning/{marker}.py", session=session
        )
        for package in ("guard", "audit", "planning"):
            assert not (repo / package / f"{marker}.py").exists()
    finally:
        (repo / marker).unlink(missing_ok=True)
        if not had_pi:  # the empty mount point bwrap left for the read-only .pi
            (repo / ".pi").rmdir()


def test_workspace_and_private_tmp_are_writable(layout: Layout) -> None:
    result = layout.run("echo made > out.txt && mkdir -p a/b && echo t > /tmp/t && cat /tmp/t")
    assert result.returncode == 0, result.stderr
    assert (layout.workspace / "out.txt").read_text() == "made\n"
    assert result.stdout == "t\n"
    host_tmp = layout.run("ls /tmp").stdout.split()
    assert "t" not in host_tmp  # each command gets a fresh /tmp


def test_everything_else_is_read_only(layout: Layout) -> None:
    outside = layout.root / "outside.txt"
    outside.write_text("host\n")
    for attack in (
        f"echo x > {outside}",
        f"rm {outside}",
        "touch /etc/zz-sandbox",
        "touch /usr/zz",
    ):
        layout.run(attack)
    assert outside.read_text() == "host\n"
    assert not Path("/etc/zz-sandbox").exists()


@pytest.fixture
def sidecar() -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the sidecar: a real process outside the sandbox."""
    marker = f"{700 + uuid.uuid4().int % 200}.{uuid.uuid4().int % 1000:03d}"
    proc = subprocess.Popen(["sleep", marker])
    yield proc
    proc.kill()
    proc.wait()


def test_outside_processes_cannot_be_seen_or_signalled(
    layout: Layout, sidecar: subprocess.Popen[bytes]
) -> None:
    pid = sidecar.pid
    me = os.getpid()
    attacks = [
        f"kill -9 {pid}",
        f"kill -9 {me}",
        "kill -9 -1",
        f"pkill -9 -f 'sleep {sidecar.args[1]}'",  # type: ignore[index]
        "pkill -9 sleep; pkill -9 python; pkill -9 node",
        f"cat /proc/{pid}/environ",
        f"ls /proc/{pid}",
        f'{PY} -c "import os, signal; os.kill({pid}, signal.SIGKILL)"',
        f"gdb -p {pid} -batch -ex kill 2>&1",
        f"strace -p {pid} 2>&1",
    ]
    for attack in attacks:
        layout.run(attack)
        assert sidecar.poll() is None, attack
    seen = layout.run(f"ls /proc | grep -x {pid}; ps -e -o pid=,comm=")
    assert str(pid) not in seen.stdout.split()
    assert "sleep" not in seen.stdout


def pgrep(pattern: str) -> list[str]:
    done = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False)
    return done.stdout.split()


def test_background_processes_die_with_the_command(layout: Layout) -> None:
    tag = f"{800 + uuid.uuid4().int % 99}.{uuid.uuid4().int % 1000:03d}"
    result = layout.run(
        f"sleep {tag} & nohup sleep {tag} >/dev/null 2>&1 & setsid sleep {tag} & "
        f"(sleep {tag} &) ; disown -a; echo started"
    )
    assert result.stdout.strip() == "started"
    deadline = time.monotonic() + 5
    while pgrep(f"sleep {tag}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pgrep(f"sleep {tag}") == []


def test_killing_the_wrapper_kills_the_sandbox(layout: Layout) -> None:
    """pi's timeout/abort kills the process group of what it spawned (bwrap)."""
    from guard._sandbox import SpawnContext, spawn

    tag = f"{900 + uuid.uuid4().int % 99}.{uuid.uuid4().int % 1000:03d}"
    context = spawn(
        layout.plan(),
        SpawnContext(command=f"sleep {tag}", cwd=str(layout.workspace), env=dict(os.environ)),
    )
    proc = subprocess.Popen(["/bin/bash", "-c", context.command], start_new_session=True)
    deadline = time.monotonic() + 10
    while not pgrep(f"sleep {tag}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pgrep(f"sleep {tag}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while pgrep(f"sleep {tag}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pgrep(f"sleep {tag}") == []


TIOCSTI_CODE = (
    "import fcntl, sys, termios\n"
    "try:\n"
    "    fcntl.ioctl(0, termios.TIOCSTI, b'x')\n"
    "    print('INJECTED')\n"
    "except OSError as e:\n"
    "    print('refused', e.errno)\n"
)


def _in_a_terminal_session(command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as the operator's shell would be: in a session whose controlling
    terminal is a pty, with that pty as stdin (TIOCSTI needs it to be the controlling one)."""
    master, slave = pty.openpty()

    def take_terminal() -> None:
        os.setsid()
        import fcntl
        import termios

        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    try:
        return subprocess.run(
            ["/bin/bash", "-c", command],
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            preexec_fn=take_terminal,
        )
    finally:
        os.close(slave)
        os.close(master)


def test_no_tiocsti_into_the_operators_terminal(layout: Layout) -> None:
    from guard._sandbox import SpawnContext, spawn

    command = f'{PY} -c "{TIOCSTI_CODE}"'
    # The control: outside the sandbox the same command can type into the terminal, so this
    # test would see an injection if the sandbox let one through (Linux allows TIOCSTI on
    # the controlling terminal; dev.tty.legacy_tiocsti=0 limits it to CAP_SYS_ADMIN).
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    if os.geteuid() == 0 or not legacy.exists() or legacy.read_text().strip() == "1":
        assert "INJECTED" in _in_a_terminal_session(command).stdout
    context = spawn(
        layout.plan(),
        SpawnContext(command=command, cwd=str(layout.workspace), env=dict(os.environ)),
    )
    done = _in_a_terminal_session(context.command)
    assert "refused" in done.stdout, done
    assert "INJECTED" not in done.stdout


def test_no_capabilities_and_kernel_knobs_read_only(layout: Layout) -> None:
    probe_code = (
        "import os\n"
        "for p in ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe', "
        "'/proc/sys/vm/drop_caches']:\n"
        "    try:\n"
        "        open(p, 'r+').close(); print('WRITABLE', p)\n"
        "    except OSError as e:\n"
        "        print('ok', p, e.errno)\n"
    )
    result = layout.run(f'grep CapEff /proc/self/status; {PY} -c "{probe_code}"')
    assert "CapEff:\t0000000000000000" in result.stdout
    assert "WRITABLE" not in result.stdout
    nested = layout.run("unshare -Ur true && echo NESTED-USERNS")
    assert "NESTED-USERNS" not in nested.stdout


def test_guard_variables_are_dropped(layout: Layout) -> None:
    env = dict(os.environ, PI_OPERATOR_GUARD_HOME=str(layout.home), PI_GUARD_DEBUG="1")
    result = layout.run("env", env=env)
    assert "PI_OPERATOR_GUARD_" not in result.stdout
    assert "PI_GUARD_" not in result.stdout
    assert "PATH=" in result.stdout  # the rest is kept


def test_runtime_dir_is_hidden(layout: Layout, tmp_path: Path) -> None:
    runtime = tmp_path / "run-user"
    runtime.mkdir()
    (runtime / "bus").write_text("a session bus socket would be here\n")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    result = layout.run(f"ls -A {runtime}", session=layout.plan(env=env), env=env)
    assert result.stdout.strip() == ""


SAFE_TO_RUN_UNSANDBOXED = ("mount", "nsenter", "unshare", "mv ", "/proc/1/", ".orig")


def test_the_read_attacks_are_real_without_the_sandbox(layout: Layout) -> None:
    """Control: the same spellings do print the key when the sandbox is off."""
    off = layout.plan(settings=layout.settings.model_copy(update={"mode": "off"}))
    assert off.state == "unsandboxed"
    for attack in key_read_attacks(layout.key, layout.workspace):
        if any(word in attack for word in SAFE_TO_RUN_UNSANDBOXED):
            continue
        # Unsandboxed, `find /` walks the whole host (every test's leftovers under /tmp): the
        # control searches the test's own tree, which is what the sandboxed run can see.
        attack = attack.replace("find / ", f"find {layout.root} ")
        result = layout.run(attack, session=off)
        assert SECRET in result.stdout, attack
        for leftover in ("k", "h", "hard", "copy"):
            (layout.workspace / leftover).unlink(missing_ok=True)


def test_write_attacks_on_a_protected_dir_inside_the_workspace(layout: Layout) -> None:
    """A protected directory inside the writable workspace (a venv there, say)."""
    venv = layout.workspace / "venv" / "site-packages"
    venv.mkdir(parents=True)
    layout.extra_read_only = (str(layout.workspace / "venv"),)
    name = "evil.pth"
    for attack in write_attacks(venv, name):
        layout.run(attack)
        assert not (venv / name).exists(), attack
    for attack in (f"rm -rf {venv}", f"mv {venv} {layout.workspace}/moved", "rm -rf venv"):
        layout.run(attack)
        assert venv.is_dir(), attack
    # Control: without the sandbox the same spellings do write.
    off = layout.plan(settings=layout.settings.model_copy(update={"mode": "off"}))
    for attack in write_attacks(venv, name):
        layout.run(attack, session=off)
        assert (venv / name).exists() or (venv / name).is_symlink(), attack
        (venv / name).unlink()


@pytest.mark.parametrize("where", ["agent", "workspace"])
def test_the_anchor_directory_is_hidden_from_the_agent(layout: Layout, where: str) -> None:
    # (/tmp is private in the sandbox: the anchors must sit somewhere the agent could see.)
    anchors = (layout.agent if where == "agent" else layout.workspace) / "anchors"
    (anchors / "log_x").mkdir(parents=True)
    kept = anchors / "log_x" / "000000000005.checkpoint"
    kept.write_text(SECRET + "\n")
    env = {**os.environ, "PI_OPERATOR_GUARD_ANCHOR_DIR": str(anchors)}
    session = layout.plan(env=env)
    for attack in (
        f"cat {kept}",
        f"ls -R {anchors}",
        f"rm -rf {anchors}/log_x",
        f"printf forged > {kept}",
        f"{PY} -c \"print(open('{kept}').read())\"",
        f"cd {anchors}/.. && tar cf - anchors | strings",
    ):
        result = layout.run(attack, session=session, env=env)
        assert_no_secret(result)
    assert kept.read_text() == SECRET + "\n"
    # the deprecated alias of the variable hides it too
    alias = {**os.environ, "PI_GUARD_ANCHOR_DIR": str(anchors)}
    assert_no_secret(layout.run(f"cat {kept}", session=layout.plan(env=alias), env=alias))
    # and without the variable the same command reads it: the test would notice a no-op
    assert SECRET in layout.run(f"cat {kept}").stdout
