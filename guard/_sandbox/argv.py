"""The bwrap argv for one agent shell command: a pure function of a :class:`SandboxInput`.

Order matters, because bwrap applies its mount operations one after the other and a later
mount covers an earlier one:

1. the whole root read-only, a minimal ``/dev``, a fresh ``/proc`` (its ``sys``,
   ``sysrq-trigger``, ``irq`` and ``bus`` read-only: a root-owned agent could otherwise
   write ``kernel.core_pattern``), ``/tmp`` private or the host's;
2. every writable path (the workspace, the user's extra paths), parents first;
3. every protected path that overlaps a writable one, re-bound read-only, parents first —
   so a venv or ``.pi/extensions/operator-guard`` *inside* the workspace stays read-only,
   and a workspace inside the guard's installation is read-only too;
4. every hidden path covered last (an empty read-only tmpfs, or ``/dev/null`` for a file),
   so the guard home is invisible even inside the workspace or ``/tmp``.

Namespaces: own PID namespace (the sidecar and pi cannot be seen, signalled or traced),
IPC, UTS and cgroup namespaces, a user namespace with nested ones forbidden, every
capability dropped (so a root-run agent cannot remount), a new session (no TIOCSTI into the
operator's terminal), and death with the parent. The network is shared unless the user's
policy says ``network = "none"``.
"""

from __future__ import annotations

import shlex

from guard._errors import BadInputError
from guard._sandbox.model import MountPath, SandboxInput

__all__ = [
    "NAMESPACE_FLAGS",
    "TMP",
    "build_argv",
    "is_within",
    "shell_prefix",
    "shell_quote",
    "wrap_command",
]

TMP = "/tmp"  # noqa: S108 - the sandbox's own /tmp: a private tmpfs unless the user says host
_PROC_COVERS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
NAMESPACE_FLAGS = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)


def is_within(path: str, root: str) -> bool:
    """``path`` is ``root`` or lies beneath it (both absolute and normalized)."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root.rstrip("/") + "/")


def _depth_order(paths: list[MountPath]) -> list[MountPath]:
    """Parents before children (so a child's mount is not covered by its parent's)."""
    unique = {p.path: p for p in paths}
    return sorted(unique.values(), key=lambda p: (p.path.count("/"), p.path))


def build_argv(inp: SandboxInput) -> tuple[str, ...]:
    """The bwrap argv up to and including the shell's ``-c`` (the command goes last).

    Raises :class:`BadInputError` when the workspace itself would be hidden.
    """
    hidden = [h for h in _depth_order(list(inp.hidden)) if h.kind != "missing"]
    hidden = [
        h for h in hidden if not any(is_within(h.path, o.path) and o is not h for o in hidden)
    ]
    if any(is_within(inp.workspace.path, h.path) for h in hidden):
        raise BadInputError("workspace", "lies inside a path the sandbox hides", inp.workspace.path)

    argv: list[str] = [inp.bwrap]
    argv += NAMESPACE_FLAGS
    if inp.unshare_user:
        argv += ("--unshare-user", "--disable-userns")
    if inp.network == "none":
        argv.append("--unshare-net")
    argv += ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
    for cover in _PROC_COVERS:
        argv += ("--ro-bind-try", cover, cover)
    if inp.tmp == "private":
        argv += ("--tmpfs", TMP)
    else:
        argv += ("--bind", TMP, TMP)

    def hidden_away(path: str) -> bool:
        return any(is_within(path, h.path) for h in hidden)

    writable = [inp.workspace] + [w for w in inp.writable if w.kind in ("dir", "file")]
    writable = [w for w in _depth_order(writable) if not hidden_away(w.path)]
    for entry in writable:
        argv += ("--bind", entry.path, entry.path)

    # A protected path needs re-binding where it overlaps something writable (or /tmp,
    # where a private tmpfs would otherwise hide it and a host /tmp would expose it).
    roots = [w.path for w in writable] + [TMP]
    bound: list[str] = []
    for entry in _depth_order(list(inp.read_only)):
        if hidden_away(entry.path) or any(is_within(entry.path, b) for b in bound):
            continue  # hidden wins; inside a read-only re-bind it is read-only already
        overlaps = any(is_within(entry.path, r) or is_within(r, entry.path) for r in roots)
        if not overlaps:
            continue
        if entry.kind == "missing":
            # Keep it absent: an empty read-only directory (bwrap creates the mount point).
            argv += ("--tmpfs", entry.path, "--remount-ro", entry.path)
        else:
            argv += ("--ro-bind", entry.path, entry.path)
        bound.append(entry.path)

    for entry in hidden:
        if entry.kind == "dir":
            argv += ("--tmpfs", entry.path, "--remount-ro", entry.path)
        else:
            argv += ("--ro-bind", "/dev/null", entry.path)

    for name in inp.unset_env:
        argv += ("--unsetenv", name)
    argv += ("--chdir", inp.workspace.path, "--", inp.shell, "-c")
    return tuple(argv)


def shell_quote(text: str) -> str:
    """POSIX single-quoting (``shlex.quote``); a NUL cannot be in an argv and is refused."""
    if "\0" in text:
        raise BadInputError("command", "contains a NUL byte, which no command line can carry")
    return shlex.quote(text)


def shell_prefix(argv: tuple[str, ...]) -> str:
    """``exec bwrap … -c``: the POSIX shell text that every wrapped command starts with."""
    return "exec " + " ".join(shell_quote(part) for part in argv)


def wrap_command(prefix: str, command: str) -> str:
    """What pi's bash spawn hook returns as ``command``: ``prefix`` plus the quoted original.

    pi runs ``<shell> -c <this>``; the shell ``exec``s bwrap, which runs
    ``<shell> -c <command>`` inside the sandbox, so the command reaches the inner shell
    byte for byte.
    """
    return f"{prefix} {shell_quote(command)}"
