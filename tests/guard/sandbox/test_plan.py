"""The session plan: user settings, fail-closed states, typed probe failures (real bwrap)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from guard._errors import BadInputError, SandboxUnavailableError
from guard._policy.layering import load_layers
from guard._policy.settings.models import NetworkSettings, SandboxSettings
from guard._sandbox import SpawnContext, effective_settings, probe, spawn
from tests.guard.sandbox.conftest import BWRAP, SECRET, Layout, needs_bwrap


def write_policy(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# -- settings: the user's layer only ---------------------------------------------------------


def test_defaults_are_required_private_tmp_shared_network(layout: Layout) -> None:
    settings, source, problems = effective_settings(layout.home, layout.workspace)
    assert settings == SandboxSettings()
    assert settings.mode == "required"
    assert (source, problems) == ("builtin", ())


def test_user_layer_sets_the_sandbox(layout: Layout) -> None:
    write_policy(
        layout.home / "operator-guard.toml",
        '[sandbox]\nmode = "off"\nwritable = ["~/.cache", "/var/tmp"]\nnetwork = "none"\n',
    )
    settings, source, problems = effective_settings(layout.home, layout.workspace)
    assert settings.mode == "off"
    assert settings.writable == ("~/.cache", "/var/tmp")
    assert settings.network.mode == "off"  # the older spelling of "off"
    assert (source, problems) == ("user", ())


@pytest.mark.parametrize(
    "table",
    [
        '[sandbox]\nwritable = ["/"]\n',
        '[sandbox]\nmode = "off"\n',
        '[sandbox]\ntmp = "host"\nbwrap = "/tmp/fake-bwrap"\n',
        "sandbox = 1\n",
    ],
)
def test_a_project_file_can_never_touch_the_sandbox(layout: Layout, table: str) -> None:
    project_file = layout.workspace / ".pi" / "operator-guard.toml"
    write_policy(project_file, table)
    settings, source, problems = effective_settings(layout.home, layout.workspace)
    assert settings == SandboxSettings()
    assert source == "builtin"
    assert [p.key for p in problems] == ["sandbox"]
    assert "user's file only" in problems[0].message
    merged = load_layers(layout.home, layout.workspace)
    assert [(i.id, i.layer) for i in merged.ignored] == [("sandbox", "project")]


@needs_bwrap
def test_a_project_file_widening_writable_changes_nothing_in_the_sandbox(layout: Layout) -> None:
    outside = layout.root / "outside.txt"
    outside.write_text("host\n")
    write_policy(
        layout.workspace / ".pi" / "operator-guard.toml",
        f'[sandbox]\nwritable = ["{layout.root}", "/"]\nmode = "off"\n',
    )
    settings, source, _ = effective_settings(layout.home, layout.workspace)
    layout.settings = settings
    session = layout.plan(settings_from=source)
    assert session.state == "sandboxed"
    layout.run(f"echo pwned > {outside}", session=session)
    assert outside.read_text() == "host\n"


def test_a_user_file_with_problems_only_restricts(layout: Layout) -> None:
    write_policy(
        layout.home / "operator-guard.toml",
        '[sandbox]\nmode = "off"\nwritable = ["/srv"]\nhidden = ["~/.ssh"]\nnetwork = "none"\n'
        '[[rule]]\nid = "me.typo"\nverdict = "confirm"\nprogam = ["x"]\n',
    )
    settings, _, problems = effective_settings(layout.home, layout.workspace)
    assert settings.mode == "required" and settings.writable == ()
    assert settings.hidden == ("~/.ssh",) and settings.network.mode == "off"
    assert any("never relaxes" in p.message for p in problems)


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('[sandbox]\nmode = "maybe"\n', "sandbox.mode"),
        ('[sandbox]\nwritable = ["relative/path"]\n', "sandbox"),
        ('[sandbox]\nbwrap = "~/bin/bwrap"\n', "sandbox"),
        ("[sandbox]\nunknown = 1\n", "sandbox.unknown"),
    ],
)
def test_invalid_sandbox_settings_are_problems_and_defaults(
    layout: Layout, table: str, key: str
) -> None:
    write_policy(layout.home / "operator-guard.toml", table)
    settings, _, _ = effective_settings(layout.home, layout.workspace)
    assert settings == SandboxSettings(ask="every")  # the defaults, and every destructive call asks
    merged = load_layers(layout.home, layout.workspace)
    assert any(p.key == key for p in merged.problems), merged.problems


# -- states -----------------------------------------------------------------------------------


def test_mode_off_wraps_nothing_and_is_marked_unsandboxed(layout: Layout) -> None:
    layout.settings = SandboxSettings(mode="off", bwrap="/nonexistent/bwrap")
    session = layout.plan(env={"PI_OPERATOR_GUARD_HOME": "/x", "PATH": "/usr/bin"})
    assert session.state == "unsandboxed"
    assert session.reason == "opted-out"
    assert session.prefix is None and session.argv is None
    context = spawn(
        session,
        SpawnContext(
            command="rm -rf build",
            cwd=str(layout.workspace),
            env={"PI_OPERATOR_GUARD_HOME": "/x", "PATH": "/usr/bin"},
        ),
    )
    assert context.command == "rm -rf build"
    assert context.env == {"PATH": "/usr/bin"}


def test_missing_bwrap_is_a_typed_failure_and_blocks(layout: Layout) -> None:
    layout.settings = SandboxSettings(bwrap="/nonexistent/bin/bwrap")
    session = layout.plan()
    assert session.state == "unavailable"
    assert session.reason == "missing-binary"
    assert "apt-get install bubblewrap" in session.message
    # How to opt out is the operator's to read (the notice, doctor), never the model's.
    assert 'mode = "off"' not in session.message
    assert session.fix is not None and 'mode = "off"' in session.fix
    from guard._sidecar.text import sandbox_block_reason, sandbox_notice

    assert 'mode = "off"' not in (sandbox_block_reason(session) or "")
    assert 'mode = "off"' in (sandbox_notice(session) or "")
    assert session.prefix is None
    with pytest.raises(SandboxUnavailableError) as caught:
        spawn(session, SpawnContext(command="true", cwd=str(layout.workspace), env={}))
    assert caught.value.reason == "missing-binary"


def test_probe_reason_codes() -> None:
    missing = probe("/nonexistent/bwrap")
    assert (missing.ok, missing.status) == (False, "missing-binary")
    assert probe(BWRAP, platform="darwin").status == "unsupported-platform"
    assert "Seatbelt" in probe(BWRAP, platform="darwin").message


def test_not_executable_bwrap(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o644)
    result = probe(str(fake))
    assert (result.ok, result.status) == (False, "not-executable")


def test_a_bwrap_that_fails_to_start_is_start_failed(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text('#!/bin/sh\necho "bwrap: Cannot mount proc on /newroot/proc" >&2\nexit 1\n')
    fake.chmod(0o755)
    result = probe(str(fake))
    assert (result.ok, result.status) == (False, "start-failed")
    assert "Cannot mount proc" in result.message


@needs_bwrap
def test_user_namespaces_unavailable_is_detected(layout: Layout) -> None:
    """Inside our own sandbox nested user namespaces are off: a real userns failure."""
    code = "from guard._sandbox import probe; print(probe('/usr/bin/bwrap').status)"
    repo = Path(__file__).resolve().parents[3]
    result = layout.run(f'cd {repo} && {sys.executable} -c "{code}"')
    assert result.stdout.strip() == "userns-unavailable", result.stderr


@needs_bwrap
def test_a_bwrap_the_agent_can_write_is_refused(layout: Layout) -> None:
    fake = layout.workspace / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.symlink_to(BWRAP)  # resolved: the real one is fine ...
    assert layout.plan(bwrap=str(fake)).state == "sandboxed"
    fake.unlink()
    fake.write_bytes(Path(os.path.realpath(BWRAP)).read_bytes())
    fake.chmod(0o755)
    session = layout.plan(bwrap=str(fake))  # ... a copy in the workspace is not
    assert (session.state, session.reason) == ("unavailable", "bwrap-writable")


@needs_bwrap
def test_workspace_inside_the_guard_home_is_refused(layout: Layout) -> None:
    inner = layout.home / "project"
    inner.mkdir()
    layout.workspace = inner
    session = layout.plan()
    assert (session.state, session.reason) == ("unavailable", "workspace-hidden")


def test_cwd_must_be_a_directory(layout: Layout) -> None:
    layout.workspace = layout.root / "missing"
    with pytest.raises(BadInputError):
        layout.plan()


@needs_bwrap
def test_spawn_refuses_another_cwd(layout: Layout) -> None:
    with pytest.raises(BadInputError):
        spawn(layout.plan(), SpawnContext(command="true", cwd=str(layout.root), env={}))


# -- user settings in the real sandbox --------------------------------------------------------


@needs_bwrap
def test_user_writable_and_hidden_paths(layout: Layout, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_ed25519").write_text(SECRET)
    layout.settings = SandboxSettings(
        writable=(str(cache), "/nonexistent/x"), hidden=(str(private),)
    )
    session = layout.plan()
    assert any("/nonexistent/x does not exist" in n for n in session.notes)
    result = layout.run(f"echo c > {cache}/c; cat {private}/id_ed25519", session=session)
    assert (cache / "c").read_text() == "c\n"
    assert SECRET not in result.stdout


@needs_bwrap
def test_writable_cannot_uncover_the_home(layout: Layout) -> None:
    layout.settings = SandboxSettings(writable=(str(layout.home), str(layout.root)))
    result = layout.run(f"cat {layout.key}; echo x > {layout.home}/planted")
    assert SECRET not in result.stdout
    assert not (layout.home / "planted").exists()


@needs_bwrap
def test_network_off(layout: Layout) -> None:
    layout.settings = SandboxSettings(network=NetworkSettings(mode="off"))
    result = layout.run("cat /proc/net/dev")
    interfaces = [line.split(":")[0].strip() for line in result.stdout.splitlines()[2:]]
    assert interfaces == ["lo"], result.stdout


@needs_bwrap
def test_tmp_host(layout: Layout, tmp_path: Path) -> None:
    layout.settings = SandboxSettings(tmp="host")
    name = f"zz-sandbox-{os.getpid()}"
    try:
        layout.run(f"echo h > /tmp/{name}")
        assert Path("/tmp", name).read_text() == "h\n"
    finally:
        Path("/tmp", name).unlink(missing_ok=True)


def test_home_mode_is_untouched_by_planning(layout: Layout) -> None:
    before = stat.S_IMODE(layout.home.stat().st_mode)
    layout.plan()
    assert stat.S_IMODE(layout.home.stat().st_mode) == before


def test_the_guides_sandbox_table_is_a_valid_user_setting() -> None:
    """The ``[sandbox]`` example in docs/policy.md parses, key by key."""
    import re

    from guard._policy.settings.config import parse_layer

    guide = (Path(__file__).resolve().parents[3] / "docs" / "policy.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", guide, flags=re.S)
    (example,) = [b for b in blocks if b.startswith("[sandbox]\n")]
    layer = parse_layer(example, "<guide>", "user")
    assert layer.problems == ()
    assert layer.sandbox is not None
    assert layer.sandbox.home == "hidden"
    assert layer.sandbox.keep_env == ("GITHUB_TOKEN",)
    assert layer.sandbox.readable == ("~/.config/pip",)


@needs_bwrap
def test_pis_code_caches_stay_read_only_where_the_sandbox_shows_them(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the host's /tmp shown (``tmp = "host"``), a command could plant compiled code in
    jiti's cache (pi takes it for an extension's source, the guard's shim too, at its next
    start) or in Node's compile cache: both stay read-only, one not made yet too; the rest
    of the tmpdir stays the command's."""
    tmpdir = layout.root / "tmpdir"
    (tmpdir / "jiti").mkdir(parents=True)
    shim = tmpdir / "jiti" / "operator-guard-index.1f2e3d4c.mjs"
    shim.write_text("original")
    node_cache = layout.root / "ncc"
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setenv("NODE_COMPILE_CACHE", str(node_cache))
    layout.settings = SandboxSettings(tmp="host")
    attacks = [
        f"echo evil > {shim}",
        f"echo evil > {tmpdir}/jiti/operator-guard-sidecar.0a0b0c0d.mjs",
        f"rm -rf {tmpdir}/jiti",
        f"mv {tmpdir}/jiti {tmpdir}/old",
        f"mkdir -p {node_cache}/v22 && echo evil > {node_cache}/v22/cafe",
        f"echo evil > {tmpdir}/node-compile-cache/cafe",
    ]
    result = layout.run("; ".join(attacks) + f"; echo fine > {tmpdir}/notes.txt")
    assert shim.read_text() == "original", result.stderr
    assert sorted(p.name for p in (tmpdir / "jiti").iterdir()) == [shim.name]
    assert node_cache.is_dir() and list(node_cache.iterdir()) == []
    assert list((tmpdir / "node-compile-cache").iterdir()) == []
    assert (tmpdir / "notes.txt").read_text() == "fine\n"
