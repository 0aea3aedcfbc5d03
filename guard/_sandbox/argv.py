"""The bwrap argv for one agent shell command: a pure function of a :class:`SandboxInput`.

Order matters, because bwrap applies its mount operations one after the other and a later
mount covers an earlier one:

1. the whole root read-only, a minimal ``/dev``, a fresh ``/proc`` (its ``sys``,
   ``sysrq-trigger``, ``irq`` and ``bus`` read-only: a root-owned agent could otherwise
   write ``kernel.core_pattern``), ``/tmp``: the session's own, a private one per command,
   or the host's;
2. the user's home covered by an empty tmpfs, and what tools need of it shown again
   read-only (symlinks among them made again), parents first;
3. every writable path (the workspace, the user's extra paths), parents first;
4. every protected path that overlaps a writable one, re-bound read-only, parents first —
   so a venv, ``.pi/extensions/operator-guard`` or ``.git/hooks`` *inside* the workspace
   stays read-only, and a workspace inside the guard's installation is read-only too;
5. every hidden path covered (an empty read-only tmpfs, or ``/dev/null`` for a file), so
   the guard home is invisible even inside the workspace or ``/tmp``;
6. the home's tmpfs remounted read-only, last, once every mount point in it exists.

Namespaces: own PID namespace (the sidecar and pi cannot be seen, signalled or traced),
IPC, UTS and cgroup namespaces, a user namespace with nested ones forbidden, every
capability dropped (so a root-run agent cannot remount), a new session (no TIOCSTI into the
operator's terminal), and death with the parent. The network is the host's in ``open``
mode; ``off`` and ``allowlist`` unshare it and cover ``/run``, where the host's Unix sockets
live (abstract ones belong to the network namespace and go with it). ``allowlist`` then
binds the guard's proxy socket read-only at :data:`PROXY_SOCKET` and runs the command
under a small bridge (:func:`bridge_argv`), which listens on ``127.0.0.1:PROXY_PORT``
inside and forwards to it; ``HTTP(S)_PROXY`` name that port.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence

from guard._errors import BadInputError
from guard._policy import within as is_within
from guard._sandbox.model import LAYER_ENV, CacheMount, MountPath, SandboxInput
from guard._sandbox.network import PROXY_PORT

__all__ = [
    "BRIDGE_PERL",
    "BRIDGE_PYTHON",
    "LAYER_SOURCE",
    "NAMESPACE_FLAGS",
    "OVERLAY_SCRIPT",
    "PROXY_ENV",
    "PROXY_SOCKET",
    "TMP",
    "bridge_argv",
    "build_argv",
    "is_within",
    "layer_tail",
    "overlay_tail",
    "overlay_wrapper",
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


PROXY_SOCKET = "/dev/operator-guard-proxy.sock"  # in bwrap's own /dev tmpfs: no trace on disk
_PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXY_ENV = {
    **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), _PROXY_URL),
    **dict.fromkeys(("npm_config_proxy", "npm_config_https_proxy"), _PROXY_URL),
    "NODE_USE_ENV_PROXY": "1",
}
"""What every command in ``allowlist`` mode finds in its environment (tools that ignore it
simply find no network)."""
_NO_PROXY = ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy")

# argv: SOCKET PORT PROGRAM ARGS…: listen on 127.0.0.1:PORT, then the parent becomes
# PROGRAM while a child forwards each connection to SOCKET. The child's stdio is /dev/null
# so the command's output closes when the command ends; the PID namespace ends the child.
# It runs inside the sandbox with the command's own rights, so nothing is gained by
# subverting it. Perl (Essential on Debian and Ubuntu) starts in a few milliseconds, a
# Python in twenty or more: Python is the fallback (BRIDGE_PYTHON, the same steps).
BRIDGE_PERL = """\
my ($path, $port, @cmd) = @ARGV;
# Linux's numbers (AF_INET 2, AF_UNIX 1, SOCK_STREAM 1): loading Socket.pm alone costs
# more than all the rest.
socket(my $l, 2, 1, 0) or die "bridge: socket: $!\\n";
bind($l, pack("S n C4 x8", 2, $port, 127, 0, 0, 1)) or die "bridge: bind: $!\\n";
listen($l, 64) or die "bridge: listen: $!\\n";
my $pid = fork();
die "bridge: fork: $!\\n" unless defined $pid;
if ($pid) { close $l; exec { $cmd[0] } @cmd; die "bridge: exec $cmd[0]: $!\\n"; }
open STDIN, "<", "/dev/null"; open STDOUT, ">", "/dev/null"; open STDERR, ">", "/dev/null";
$SIG{CHLD} = "IGNORE";
while (1) {
  accept(my $c, $l) or next;
  my $k = fork();
  if (!defined $k || $k) { close $c; next; }
  close $l;
  socket(my $u, 1, 1, 0) or exit 1;
  connect($u, pack("S Z108", 1, $path)) or exit 1;
  my %peer = (fileno($c) => [$c, $u], fileno($u) => [$u, $c]);
  while (%peer) {
    my $rin = "";
    vec($rin, $_, 1) = 1 for keys %peer;
    next unless select(my $rout = $rin, undef, undef, undef) > 0;
    for my $fd (keys %peer) {
      next unless vec($rout, $fd, 1);
      my ($from, $to) = @{$peer{$fd}};
      my $n = sysread($from, my $buf, 65536);
      if ($n) {
        for (my $off = 0; $off < $n;) {
          my $w = syswrite($to, $buf, $n - $off, $off);
          exit 0 unless defined $w;
          $off += $w;
        }
      } else { shutdown($to, 1); delete $peer{$fd}; }
    }
  }
  exit 0;
}
"""
BRIDGE_PYTHON = """\
import os, select, signal, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[2])))
s.listen(64)
if os.fork():
    s.close()
    os.execv(sys.argv[3], sys.argv[3:])
n = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(n, fd)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
while True:
    c, _ = s.accept()
    if os.fork():
        c.close()
        continue
    s.close()
    u = socket.socket(socket.AF_UNIX)
    try:
        u.connect(sys.argv[1])
    except OSError:
        os._exit(1)
    peer = {c: u, u: c}
    while peer:
        for x in select.select(list(peer), [], [])[0]:
            try:
                d = x.recv(65536)
            except OSError:
                d = b""
            if d:
                peer[x].sendall(d)
            else:
                try:
                    peer[x].shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                del peer[x]
    os._exit(0)
"""


def bridge_argv(interpreter: str) -> tuple[str, ...]:
    """The bridge's argv up to its own arguments, for a Perl or a Python ``interpreter``."""
    if os.path.basename(interpreter).startswith("perl"):
        return (interpreter, "-e", BRIDGE_PERL, "--")
    return (interpreter, "-I", "-S", "-c", BRIDGE_PYTHON)


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
    if inp.network != "open":
        argv.append("--unshare-net")
    argv += ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
    if inp.network != "open":
        # The host's Unix sockets (docker, containerd, D-Bus, PostgreSQL, the user's runtime
        # dir) live under /run; /var/run is a link to it.
        argv += ("--tmpfs", "/run")
    for cover in _PROC_COVERS:
        argv += ("--ro-bind-try", cover, cover)
    if inp.tmp == "session" and inp.tmp_source:
        argv += ("--bind", inp.tmp_source, TMP)
    elif inp.tmp == "host":
        argv += ("--bind", TMP, TMP)
    else:
        argv += ("--tmpfs", TMP)

    def hidden_away(path: str) -> bool:
        return any(is_within(path, h.path) for h in hidden)

    home = inp.home if inp.home is not None and inp.home.kind == "dir" else None
    if home is None or home.path == "/":
        home = None
    elif inp.home_mode == "read-only":
        argv += ("--ro-bind", home.path, home.path)  # visible even where / is not (/tmp)
        home = None
    else:
        argv += ("--tmpfs", home.path)
        argv += _home_view(inp, home.path, hidden_away)
    # Package caches: writable, through the command's own layer over the project's cache
    # over the user's; what the command writes never reaches the user's cache.
    for cache in inp.overlay.caches if inp.overlay is not None else ():
        if not hidden_away(cache.target):
            argv += ("--bind", cache.staging, cache.target)

    writable = [w for w in inp.writable if w.kind in ("dir", "file")]
    if inp.workspace_writable:
        writable.insert(0, inp.workspace)
    writable = [w for w in _depth_order(writable) if not hidden_away(w.path)]
    for entry in writable:
        argv += ("--bind", entry.path, entry.path)

    # A protected path needs re-binding where it overlaps something writable (or /tmp,
    # where a private tmpfs would otherwise hide it and a host /tmp would expose it).
    # Each directory that holds a protected or hidden path inside a writable one is bound
    # onto itself (still writable), so it is a mount point: it cannot be renamed away and
    # made again with other contents (mv .git .g && mkdir -p .git/hooks), and the mount
    # below it stays where the operator's tools look.
    protected_paths = [r.path for r in inp.read_only]
    for entry in _depth_order(list(inp.pinned)):
        if entry.kind != "dir" or hidden_away(entry.path):
            continue
        if any(is_within(entry.path, p) for p in protected_paths):
            continue  # read-only (re-bound below) already
        if any(entry.path == w.path for w in writable):
            continue
        if any(is_within(entry.path, w.path) for w in writable):
            argv += ("--bind", entry.path, entry.path)

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

    run_covered = inp.network != "open"
    for entry in hidden:
        if run_covered and is_within(entry.path, "/run"):
            continue  # the empty /run already hides it
        if entry.kind == "dir":
            argv += ("--tmpfs", entry.path, "--remount-ro", entry.path)
        else:
            argv += ("--ro-bind", "/dev/null", entry.path)

    if home is not None:
        argv += ("--remount-ro", home.path)
    if run_covered:
        argv += ("--remount-ro", "/run")
    command: tuple[str, ...] = (inp.shell, "-c")
    if inp.network == "allowlist" and inp.proxy is not None:
        argv += ("--ro-bind", inp.proxy.socket, PROXY_SOCKET)
        for name, value in PROXY_ENV.items():
            argv += ("--setenv", name, value)
        for name in _NO_PROXY:
            argv += ("--unsetenv", name)
        bridge = (*bridge_argv(inp.proxy.bridge), PROXY_SOCKET, str(PROXY_PORT))
        command = (*bridge, *command)
    if inp.overlay is not None:
        # The user's own ids inside (the namespace of the overlay maps them to root).
        argv += ("--uid", str(inp.overlay.uid), "--gid", str(inp.overlay.gid))
        argv += ("--unsetenv", LAYER_ENV)
    for name in inp.unset_env:
        argv += ("--unsetenv", name)
    argv += ("--chdir", inp.workspace.path, "--", *command)
    return tuple(argv)


def _home_view(inp: SandboxInput, home: str, hidden_away: Callable[[str], bool]) -> list[str]:
    """The parts of the covered home shown again: links made, paths bound read-only."""
    argv: list[str] = []
    shown: list[str] = []
    steps = [(p.path, "bind") for p in inp.exposed if p.kind in ("dir", "file")]
    steps += [(link, "link") for link, _ in inp.links]
    targets = dict(inp.links)
    for path, step in sorted(set(steps), key=lambda s: (s[0].count("/"), s[0], s[1])):
        if not is_within(path, home) or path == home or hidden_away(path):
            continue
        if any(is_within(path, parent) for parent in shown):
            continue  # inside something already shown: there already
        if step == "link":
            argv += ("--symlink", targets[path], path)
        else:
            argv += ("--ro-bind", path, path)
            shown.append(path)
    return argv


# Runs as root of a new user namespace, in a new mount namespace (unshare): makes the
# command's layer, its directories in one ``mkdir``, and mounts every overlay of it with one
# ``mount -a``: the workspace's (this command's writes over the workspace) and each package
# cache's (the project's own cache over the user's, this command's writes on top, on its
# staging directory); then runs bwrap, which binds the workspace (now the overlay) and the
# staging directories as usual. One mount(8) and one mkdir instead of one each per overlay:
# a dozen cache overlays cost some 60 ms per command as separate programs. The overlays'
# upper and work directories are named relative to the layer (overlayfs resolves them from
# the mounting process's working directory), so the table is the same for every command of
# a session. Each overlay must then show the ``work`` directory the kernel makes in its
# workdir: an entry mount -a skipped (it thought it mounted already) refuses the command.
# userxattr: the only overlay an unprivileged user may mount (Linux >= 5.11).
# $1 layers, $2 workspace, $3 layer id, $4 mount, $5 the mount table, $6 the layer's
# directories (our own names: no blanks, no glob characters), $7 their work directories;
# then bwrap.
OVERLAY_SCRIPT = (
    "set -e; "
    'case "$3" in ""|*[!A-Za-z0-9_-]*) '
    'echo "operator-guard: this command has no layer; nothing was run" >&2; exit 125;; esac; '
    'L="$1/$3"; mkdir -m 700 "$L"; cd "$L"; mkdir $6; '
    "printf '%s\\n' \"$5\" > fstab; "
    '"$4" -a -T "$L/fstab"; '
    'for w in $7; do [ -d "$w/work" ] || { '
    'echo "operator-guard: the layer of this command was not mounted; nothing was run" >&2; '
    "exit 125; }; done; "
    'shift 7; exec "$@"'
)
"""The shell text that mounts a command's layer; its arguments are :func:`overlay_wrapper`'s,
the layer id, then :func:`overlay_tail`'s."""

# The source name of our overlays in the mount table: mount -a skips an entry whose source and
# target are mounted already, so the name is ours alone.
LAYER_SOURCE = "pi-guard-layer"


def _fstab_field(path: str) -> str:
    """A path as one field of a mount table (fstab(5): blanks and newlines as octal)."""
    return path.replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012")


def overlay_wrapper(inp: SandboxInput) -> tuple[str, ...]:
    """The argv before bwrap's that mounts the command's layer (empty without one).

    The layer id is not part of it: the shell expands ``$PI_OPERATOR_GUARD_LAYER`` there
    (see :func:`shell_prefix`); :func:`overlay_tail` is what follows the id.
    """
    overlay = inp.overlay
    if overlay is None:
        return ()
    paths = [overlay.layers, inp.workspace.path]
    paths += [p for c in overlay.caches for p in (c.store, c.lower, c.staging)]
    for path in paths:
        if any(ch in path for ch in ",:\\"):
            raise BadInputError("path", "overlay options cannot name a path with , : or \\", path)
    return (
        overlay.unshare,
        "--user",
        "--map-root-user",
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        OVERLAY_SCRIPT,
        "sh",
        overlay.layers,
        inp.workspace.path,
    )


def overlay_tail(inp: SandboxInput) -> tuple[str, ...]:
    """What follows the layer id (see :func:`layer_tail`); empty without a layer."""
    overlay = inp.overlay
    if overlay is None:
        return ()
    return layer_tail(overlay.mount, inp.workspace.path, overlay.caches)


def layer_tail(mount: str, workspace: str, caches: Sequence[CacheMount] = ()) -> tuple[str, ...]:
    """The mount program, the mount table of a layer's overlays (the workspace's, then each
    package cache's), the layer's directories and their work directories."""
    ws = _fstab_field(workspace)
    table = [f"{LAYER_SOURCE} {ws} overlay lowerdir={ws},upperdir=upper,workdir=work,userxattr 0 0"]
    dirs, works = ["upper", "work"], ["work"]
    for i, cache in enumerate(caches):
        lower = f"{_fstab_field(cache.store)}:{_fstab_field(cache.lower)}"
        table.append(
            f"{LAYER_SOURCE} {_fstab_field(cache.staging)} overlay lowerdir={lower},"
            f"upperdir=c{i}/upper,workdir=c{i}/work,userxattr 0 0"
        )
        dirs += [f"c{i}", f"c{i}/upper", f"c{i}/work"]
        works.append(f"c{i}/work")
    return (mount, "\n".join(table), " ".join(dirs), " ".join(works))


def shell_quote(text: str) -> str:
    """POSIX single-quoting (``shlex.quote``); a NUL cannot be in an argv and is refused."""
    if "\0" in text:
        raise BadInputError("command", "contains a NUL byte, which no command line can carry")
    return shlex.quote(text)


def shell_prefix(
    argv: tuple[str, ...], wrapper: tuple[str, ...] = (), tail: tuple[str, ...] = ()
) -> str:
    """``exec bwrap … -c``: the POSIX shell text that every wrapped command starts with.

    With an overlay ``wrapper`` and its ``tail`` it is ``exec unshare … sh -c SCRIPT sh
    LAYERS WORKSPACE "${PI_OPERATOR_GUARD_LAYER-}" MOUNT N CACHES… bwrap … -c``: the layer
    id is the one thing the shell expands, from the environment the shim set for this command.
    """
    quoted = " ".join(shell_quote(part) for part in argv)
    if not wrapper:
        return "exec " + quoted
    head = " ".join(shell_quote(part) for part in wrapper)
    after = " ".join(shell_quote(part) for part in tail)
    return f'exec {head} "${{{LAYER_ENV}-}}" {after} {quoted}'


def wrap_command(prefix: str, command: str) -> str:
    """What pi's bash spawn hook returns as ``command``: ``prefix`` plus the quoted original.

    pi runs ``<shell> -c <this>``; the shell ``exec``s bwrap, which runs
    ``<shell> -c <command>`` inside the sandbox, so the command reaches the inner shell
    byte for byte.
    """
    return f"{prefix} {shell_quote(command)}"
