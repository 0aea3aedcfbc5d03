"""The pure argv builder and the spawn-hook quoting."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._errors import BadInputError
from guard._sandbox import SandboxInput, build_argv, shell_prefix, shell_quote, wrap_command
from guard._sandbox.model import MountPath
from tests.guard.sandbox.conftest import Layout, needs_bwrap


def d(path: str, kind: str = "dir") -> MountPath:
    return MountPath(path=path, kind=kind)  # type: ignore[arg-type]


def base(**kw: object) -> SandboxInput:
    values: dict[str, object] = {"bwrap": "/usr/bin/bwrap", "workspace": d("/w")}
    values.update(kw)
    return SandboxInput.model_validate(values)


def mounts(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """(op, dest) pairs after the namespace flags, in order."""
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(argv):
        op = argv[i]
        if op in ("--bind", "--ro-bind", "--ro-bind-try"):
            out.append((op, argv[i + 2]))
            i += 3
        elif op in ("--tmpfs", "--remount-ro", "--dev", "--proc"):
            out.append((op, argv[i + 1]))
            i += 2
        elif op == "--":
            break
        else:
            i += 1
    return out


def test_typical_argv() -> None:
    argv = build_argv(
        base(
            workspace=d("/home/me/proj"),
            read_only=(d("/home/me/proj/.venv"), d("/usr/lib/python3"), d("/home/me/proj/.pi")),
            hidden=(
                d("/home/me/.pi/agent/operator-guard"),
                d("/home/me/.pi/agent/auth.json", "file"),
            ),
            unset_env=("PI_OPERATOR_GUARD_HOME",),
        )
    )
    assert argv[0] == "/usr/bin/bwrap"
    for flag in ("--unshare-pid", "--die-with-parent", "--new-session", "--unshare-user",
                 "--disable-userns", "--unshare-ipc"):  # fmt: skip
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--unshare-net" not in argv
    assert argv[-3:] == ("--", "/bin/bash", "-c")
    assert argv[argv.index("--chdir") + 1] == "/home/me/proj"
    assert argv[argv.index("--unsetenv") + 1] == "PI_OPERATOR_GUARD_HOME"
    assert mounts(argv) == [
        ("--ro-bind", "/"),
        ("--dev", "/dev"),
        ("--proc", "/proc"),
        ("--ro-bind-try", "/proc/sys"),
        ("--ro-bind-try", "/proc/sysrq-trigger"),
        ("--ro-bind-try", "/proc/irq"),
        ("--ro-bind-try", "/proc/bus"),
        ("--tmpfs", "/tmp"),
        ("--bind", "/home/me/proj"),
        ("--ro-bind", "/home/me/proj/.pi"),
        ("--ro-bind", "/home/me/proj/.venv"),  # /usr/lib/python3: read-only already
        ("--ro-bind", "/home/me/.pi/agent/auth.json"),  # from /dev/null
        ("--tmpfs", "/home/me/.pi/agent/operator-guard"),
        ("--remount-ro", "/home/me/.pi/agent/operator-guard"),
    ]
    auth = argv.index("/home/me/.pi/agent/auth.json")
    assert argv[auth - 2 : auth] == ("--ro-bind", "/dev/null")


def test_order_protected_after_writable_hidden_last() -> None:
    argv = build_argv(
        base(
            workspace=d("/w"),
            writable=(d("/w/cache"), d("/c")),
            read_only=(d("/w/cache/guard"), d("/c/x/y"), d("/w")),
            hidden=(d("/w/cache/guard/home"), d("/c/home")),
        )
    )
    ops = mounts(argv)[8:]
    binds = [m for m in ops if m[0] == "--bind"]
    ro = [m for m in ops if m[0] == "--ro-bind"]
    tmpfs = [m for m in ops if m[0] == "--tmpfs"]
    assert binds == [("--bind", "/c"), ("--bind", "/w"), ("--bind", "/w/cache")]
    assert ro == [("--ro-bind", "/w"), ("--ro-bind", "/c/x/y")]  # /w/cache/guard inside /w
    assert tmpfs == [("--tmpfs", "/c/home"), ("--tmpfs", "/w/cache/guard/home")]
    assert ops.index(binds[-1]) < ops.index(ro[0]) < ops.index(tmpfs[0])


def test_missing_paths() -> None:
    argv = build_argv(
        base(
            writable=(d("/nope", "missing"),),
            read_only=(d("/w/.pi", "missing"), d("/w/gone", "missing")),
            hidden=(d("/nohome", "missing"),),
        )
    )
    ops = mounts(argv)
    assert ("--bind", "/nope") not in ops
    assert ("--tmpfs", "/nohome") not in ops
    # a missing protected path in the workspace is held absent: an empty read-only dir
    assert ("--tmpfs", "/w/.pi") in ops and ("--remount-ro", "/w/.pi") in ops


def test_hidden_wins_and_workspace_inside_hidden_is_refused() -> None:
    argv = build_argv(
        base(writable=(d("/h/sub"),), read_only=(d("/h/ro"),), hidden=(d("/h"), d("/h/k", "file")))
    )
    ops = mounts(argv)
    assert ("--bind", "/h/sub") not in ops and ("--ro-bind", "/h/ro") not in ops
    assert ("--ro-bind", "/h/k") not in ops  # inside a hidden dir already
    with pytest.raises(BadInputError):
        build_argv(base(workspace=d("/h/w"), hidden=(d("/h"),)))


def test_options() -> None:
    argv = build_argv(base(tmp="host", network="off", unshare_user=False, shell="/bin/sh"))
    assert ("--bind", "/tmp") in mounts(argv) and ("--tmpfs", "/tmp") not in mounts(argv)
    assert "--unshare-net" in argv and "--unshare-user" not in argv
    assert ("--tmpfs", "/run") in mounts(argv)
    assert argv[-2:] == ("/bin/sh", "-c")


def test_root_workspace_protects_everything_listed() -> None:
    argv = build_argv(base(workspace=d("/"), read_only=(d("/opt/venv"),)))
    assert ("--ro-bind", "/opt/venv") in mounts(argv)


# -- quoting -----------------------------------------------------------------------------------

TRICKY = [
    "echo 'single' \"double\" `back` $(sub) $HOME \\$ \\\\",
    "printf '%s\\n' a\nb\n\nc",
    "it's; echo '\"'\"'",
    "naïve ünïcødé — 日本語 🙂",
    "",
    " leading and trailing ",
    "-c",
    "--",
    "'",
    "\\",
    "a\tb\rc\x1b[31m",
    "$'\\x41'",
]


@pytest.mark.parametrize("text", TRICKY)
def test_wrap_round_trips_through_a_real_shell(text: str) -> None:
    prefix = shell_prefix(("printf", "%s"))
    out = subprocess.run(
        ["/bin/bash", "-c", wrap_command(prefix, text)], capture_output=True, check=True
    )
    assert out.stdout.decode() == text


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=200)
)
def test_quote_round_trips(text: str) -> None:
    assert shlex.split(shell_quote(text)) == [text]
    prefix = shell_prefix(("printf", "%s"))
    out = subprocess.run(
        ["/bin/sh", "-c", wrap_command(prefix, text)], capture_output=True, check=True
    )
    assert out.stdout.decode() == text


@pytest.mark.parametrize("text", ["a\0b", "\0", "echo ok\0; rm -rf /"])
def test_nul_is_refused(text: str) -> None:
    with pytest.raises(BadInputError):
        wrap_command("exec true", text)


@needs_bwrap
@pytest.mark.parametrize("text", TRICKY)
def test_the_inner_shell_receives_the_command_byte_for_byte(layout: Layout, text: str) -> None:
    result = layout.run(f"printf %s {shlex.quote(text)}")
    assert result.stdout == text.replace("\r", "\n") or result.stdout == text
    assert result.returncode == 0, result.stderr
