"""Why a path failed in the sandbox: each refusal, read from the real errors of real tools
in real bwrap, named for the model (never with a way to turn the sandbox off) and for the
operator (the setting that would widen it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard._policy.settings.models import SandboxSettings
from guard._sandbox.explain import explain_network, explain_output
from tests.guard.sandbox.conftest import make_layout, needs_bwrap

pytestmark = needs_bwrap


@pytest.fixture
def world(tmp_path: Path):  # type: ignore[no-untyped-def]
    layout = make_layout(tmp_path)
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text("k\n")
    (user / "notes").mkdir()
    env = {**os.environ, "HOME": str(user)}
    session = layout.plan(env=env)
    return layout, user, env, session


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("touch /usr/zz-new 2>&1", "system"),
        ("echo x > ~/notes/todo.md 2>&1", "home"),
        ("cat ~/notes/missing.txt 2>&1", "home"),
        ("echo x >> {ext}/index.ts 2>&1", "guard"),
        ("node -e \"require('fs').writeFileSync('/usr/zz-node', 'x')\" 2>&1", "system"),
    ],
)
def test_a_refused_path_gets_a_line_naming_the_guard(world, command: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    layout, user, env, session = world
    ext = layout.agent / "extensions" / "operator-guard"
    done = layout.run(command.format(ext=ext), session=session, env=env)
    refusals = explain_output(done.stdout + done.stderr, session.argv or (), home=str(user))
    assert len(refusals) == 1, (done.stdout, done.stderr)
    (refusal,) = refusals
    assert refusal.note.startswith("operator-guard: ")
    assert 'mode = "off"' not in refusal.note and "[sandbox]" not in refusal.note
    words = {"system": "read-only in the agent's sandbox (the system",
             "home": "not shown to the agent's commands",
             "guard": "the guard keeps it so"}  # fmt: skip
    assert words[kind] in refusal.note
    if kind in ("system", "home"):
        assert "[sandbox]" in refusal.hint  # the operator's way to widen it


def test_errors_in_the_workspace_or_unrelated_paths_get_no_line(world) -> None:  # type: ignore[no-untyped-def]
    layout, user, env, session = world
    done = layout.run("cat nothing.txt 2>&1; cat /etc/no-such-file 2>&1", session=session, env=env)
    # the workspace is writable, /etc/no-such-file simply does not exist: the system is
    # read-only, so a line names it, once; the workspace error gets none
    refusals = explain_output(done.stdout, session.argv or (), home=str(user))
    assert [r.path for r in refusals] == ["/etc/no-such-file"]
    assert explain_output("all good\n", session.argv or (), home=str(user)) == []


def test_the_shells_own_error_prefix_is_never_blamed(world) -> None:  # type: ignore[no-untyped-def]
    layout, user, env, session = world
    # a venv that is not there: bash says "/bin/bash: line 1: .venv/bin/python: No such file"
    done = layout.run(".venv/bin/python -V 2>&1; ./missing.sh 2>&1", session=session, env=env)
    assert "No such file" in done.stdout
    assert explain_output(done.stdout, session.argv or (), home=str(user)) == []


@pytest.mark.parametrize(
    "line",
    [
        "/bin/bash: line 1: .venv/bin/python: No such file or directory",
        "/usr/bin/bash: line 3: ./build.sh: Permission denied",
        "/bin/sh: 1: .venv/bin/pip: not found; /bin/sh: 1: cannot open x: No such file",
        "/bin/zsh:1: no such file or directory: .venv/bin/python",
        "/usr/bin/env: 'python9': No such file or directory",
    ],
)
def test_a_program_prefix_is_not_the_failed_path(world, line: str) -> None:  # type: ignore[no-untyped-def]
    _layout, user, _env, session = world
    assert explain_output(line, session.argv or (), home=str(user)) == []


def test_the_failed_path_after_a_shell_prefix_is_still_named(world) -> None:  # type: ignore[no-untyped-def]
    _layout, user, _env, session = world
    for line in (
        "/bin/bash: line 1: /usr/zz-new: Read-only file system",
        "/bin/sh: 1: cannot create /usr/zz-new: Read-only file system",
    ):
        refusals = explain_output(line, session.argv or (), home=str(user))
        assert [r.path for r in refusals] == ["/usr/zz-new"], line


def test_hidden_secrets_are_named_as_hidden(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    layout.settings = SandboxSettings(home="read-only")
    env = {**os.environ, "HOME": str(tmp_path / "user")}
    (tmp_path / "user" / ".ssh").mkdir(parents=True)
    (tmp_path / "user" / ".ssh" / "id_rsa").write_text("k\n")
    session = layout.plan(env=env)
    done = layout.run(f"cat {layout.key} 2>&1", session=session, env=env)
    (refusal,) = explain_output(done.stdout, session.argv or (), home=str(tmp_path / "user"))
    assert "hidden from the agent's commands" in refusal.note


# -- the network -------------------------------------------------------------------------------


def test_a_refused_host_is_named_for_the_model_and_the_setting_for_the_operator() -> None:
    (refusal,) = explain_network("curl: (56) CONNECT tunnel failed, response 403", "allowlist",
                                 [("evil.example", 443), ("evil.example", 80)])  # fmt: skip
    assert refusal.note == (
        "operator-guard: the sandbox's network allowlist refused evil.example:443, evil.example:80."
    )
    assert (
        refusal.hint == 'to allow it: [sandbox.network] allow = ["evil.example"] in the user policy'
    )


@pytest.mark.parametrize(
    "output",
    [
        "curl: (6) Could not resolve host: example.com",
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
        "npm error code EAI_AGAIN",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "connect: Network is unreachable",
    ],
)
def test_no_network_is_said_without_telling_the_model_how_to_open_it(output: str) -> None:
    (off,) = explain_network(output, "off")
    assert off.note == "operator-guard: the agent's commands have no network in this session."
    assert "mode" not in off.note and "allowlist" in off.hint
    (allow,) = explain_network(output, "allowlist")
    assert "only through the guard's proxy" in allow.note


def test_an_open_network_or_an_unrelated_error_says_nothing() -> None:
    assert explain_network("curl: (6) Could not resolve host: x", "open", [("x", 443)]) == []
    assert explain_network("make: *** [all] Error 2", "off") == []
