"""What a process is, as the fork server compares it: namespaces, cgroup, the code it runs.

Standard library only: the launcher imports this and must start in a few milliseconds.

* :func:`namespaces_of` and :func:`cgroup_of` read ``/proc/<pid>/`` (the fork server reads its
  peer's there itself; a peer's own word about them is never asked);
* :func:`code_stamp` is what a fork server checks before every fork: every file of the
  ``guard``, ``audit`` and ``planning`` packages (path, size, mtime), the directories of
  ``sys.path`` (a package added, removed or upgraded changes its directory) and the
  interpreter's own file. Any difference means the code a cold sidecar would run is not what
  the fork server imported;
* :func:`startup_env` is the part of an environment a Python process reads at its start (the
  locale, the loader's and OpenSSL's variables, the time zone): a fork server's child keeps
  what its server read, so a launcher whose start environment differs is refused.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

__all__ = [
    "NAMESPACES",
    "RLIMITS",
    "SIGNALS",
    "cgroup_of",
    "code_roots",
    "code_stamp",
    "ignored_signals",
    "namespaces_of",
    "parent_of",
    "rlimits",
    "startup_env",
]

NAMESPACES = ("mnt", "net", "user", "pid", "ipc", "uts", "cgroup")
"""The namespaces a launcher must share with its fork server."""

RLIMITS = ("RLIMIT_AS", "RLIMIT_CORE", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_NOFILE")
"""The resource limits a sidecar takes from its launcher (each can only be lowered)."""

SIGNALS = (
    signal.SIGHUP,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGTERM,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGALRM,
)
"""The signals whose inherited disposition (ignored or not) a sidecar takes from its launcher."""

_STARTUP_PREFIXES = ("LC_", "LD_", "OPENSSL_", "SSL_", "PYTHON", "MALLOC_", "GCONV_")
_STARTUP_NAMES = frozenset({"LANG", "LANGUAGE", "TZ", "TZDIR"})
_PACKAGES = ("guard", "audit", "planning")


def namespaces_of(pid: int | str) -> dict[str, str]:
    """The namespace links of process ``pid`` (``"self"`` for this one); raises OSError."""
    return {kind: os.readlink(f"/proc/{pid}/ns/{kind}") for kind in NAMESPACES}


def cgroup_of(pid: int | str) -> str:
    """The cgroup membership of process ``pid``; raises OSError."""
    with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
        return handle.read()


def parent_of(pid: int | str) -> int:
    """The parent pid of process ``pid``; raises OSError."""
    with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise OSError(f"no PPid for {pid}")


def startup_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` a Python process reads at its start."""
    return {k: v for k, v in env.items() if k in _STARTUP_NAMES or k.startswith(_STARTUP_PREFIXES)}


def ignored_signals() -> list[int]:
    """Which of :data:`SIGNALS` this process ignores (as it inherited them)."""
    return [int(s) for s in SIGNALS if signal.getsignal(s) == signal.SIG_IGN]


def rlimits() -> dict[str, list[int]]:
    """This process's :data:`RLIMITS`, ``name -> [soft, hard]``."""
    import resource

    return {name: list(resource.getrlimit(getattr(resource, name))) for name in RLIMITS}


def code_roots() -> list[str]:
    """The directories of the ``guard``, ``audit`` and ``planning`` packages this Python
    imports (found without importing them: ``audit`` and ``planning`` are not imported by a
    launcher)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # guard/
    roots = [here]
    for name in _PACKAGES[1:]:
        for entry in [os.path.dirname(here), *sys.path]:
            candidate = os.path.join(entry or os.getcwd(), name)
            if os.path.isfile(os.path.join(candidate, "__init__.py")):
                roots.append(os.path.abspath(candidate))
                break
    return roots


def code_stamp(roots: list[str] | None = None) -> tuple[object, ...]:
    """What the code a sidecar would run is made of, cheaply (sizes and mtimes, no reads)."""
    files: list[tuple[str, int, int]] = []
    roots = code_roots() if roots is None else roots
    # A directory that holds our packages (a checkout installed in place) changes whenever
    # anything is made beside them; the packages' own files are stamped one by one below.
    ours = {os.path.dirname(os.path.abspath(r)) for r in roots}
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                path = os.path.join(folder, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                files.append((path, info.st_size, info.st_mtime_ns))
    paths: list[tuple[str, int]] = []
    for entry in sys.path:
        if os.path.abspath(entry or os.getcwd()) in ours:
            paths.append((entry, 0))
            continue
        try:
            paths.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            paths.append((entry, -1))
    executable = os.path.realpath(sys.executable)
    try:
        exe = os.stat(executable)
        exe_id: tuple[int, int] = (exe.st_size, exe.st_mtime_ns)
    except OSError:
        exe_id = (-1, -1)
    return (sys.version, executable, exe_id, tuple(paths), tuple(files))
