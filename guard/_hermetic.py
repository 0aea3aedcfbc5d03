"""Programs the guard starts itself: by absolute path, from system directories, hermetically.

The agent can write files the user owns (through tools that run outside the sandbox, or a
workspace the operator later uses), so nothing the guard runs may be chosen or configured by
the user's environment:

* a program is looked up only in :data:`SYSTEM_BIN_DIRS`, never on ``PATH``; a candidate
  that lies under the user's home, or that its owner's group or others can write, is passed
  over (``~/.local/bin/git`` first on ``PATH`` is never run);
* it gets a minimal environment (:func:`minimal_env`): ``PATH`` of system directories only,
  ``LC_ALL=C``, ``HOME`` pointing at an empty directory of our own, nothing else inherited
  (no ``NODE_OPTIONS``, ``LD_PRELOAD``, ``GIT_*``, ``PYTHON*``);
* git gets no system or global configuration (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``, git-config(1) ENVIRONMENT), and :data:`GIT_SAFE_OPTIONS`
  turn off hooks, fsmonitor, signing and automatic gc for the one command
  (githooks(5): ``core.hooksPath``; git-config(1): ``core.fsmonitor``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from functools import lru_cache

from guard._errors import GuardError

__all__ = [
    "GIT_SAFE_OPTIONS",
    "SYSTEM_BIN_DIRS",
    "SYSTEM_PATH",
    "ProgramNotFound",
    "git_env",
    "minimal_env",
    "run",
    "system_program",
]

SYSTEM_BIN_DIRS: tuple[str, ...] = (
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/bin",
    "/opt/homebrew/bin",
)
"""Where the guard looks for a program it runs (in this order); never ``PATH``."""

SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"

GIT_SAFE_OPTIONS: tuple[str, ...] = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "protocol.allow=never",
)
"""git options for one hermetic command: no hooks, no fsmonitor, no signing, no auto gc,
no transport (nothing the guard does with git needs a remote)."""


class ProgramNotFound(GuardError):
    """No trustworthy copy of a program lies in the system directories."""

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        super().__init__(f"{name}: {why}")


def _under_home(path: str) -> bool:
    home = os.path.realpath(os.path.expanduser("~"))
    return home not in ("", "/") and (path == home or path.startswith(home + "/"))


def _trustworthy(path: str) -> str | None:
    """Why ``path`` may not be run (``None`` when it may): checked on its real path."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as exc:
        return exc.strerror or "cannot stat"
    if not stat.S_ISREG(info.st_mode) or not os.access(real, os.X_OK):
        return "not an executable file"
    if _under_home(real):
        return f"{real} lies in the user's home"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{real} is writable by its group or others"
    return None


def system_program(name: str, dirs: Sequence[str] = SYSTEM_BIN_DIRS) -> str:
    """The absolute path of ``name`` in the first system directory that has a trustworthy copy.

    Raises :class:`ProgramNotFound` naming every place looked at.
    """
    if "/" in name:
        raise ProgramNotFound(name, "give a program name, not a path")
    refused: list[str] = []
    for directory in dirs:
        candidate = os.path.join(directory, name)
        if not os.path.lexists(candidate):
            continue
        why = _trustworthy(candidate)
        if why is None:
            return candidate
        refused.append(f"{candidate} ({why})")
    where = "; ".join(refused) if refused else "not in " + ", ".join(dirs)
    raise ProgramNotFound(name, where)


@lru_cache(maxsize=1)
def _empty_home() -> str:
    """An empty private directory, used as ``HOME`` so no dotfile of the user is read.

    It is removed when the process that made it exits; a forked child that exits first
    leaves it to its parent.
    """
    path = tempfile.mkdtemp(prefix="pi-guard-hermetic-")
    atexit.register(_remove_empty_home, path, os.getpid())
    return path


def _remove_empty_home(path: str, owner: int) -> None:
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


def minimal_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a program the guard runs: nothing inherited."""
    env = {
        "PATH": SYSTEM_PATH,
        "LC_ALL": "C",
        "LANG": "C",
        "HOME": _empty_home(),
        "TMPDIR": tempfile.gettempdir(),
    }
    env.update(extra or {})
    return env


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """:func:`minimal_env` for git: no system, global or XDG configuration, no prompts."""
    return minimal_env(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "false",
            "XDG_CONFIG_HOME": os.path.join(_empty_home(), "xdg"),
            **(extra or {}),
        }
    )


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    input_bytes: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` (its first word an absolute path) with ``env`` (default :func:`minimal_env`).

    The working directory defaults to the empty home, never the caller's (the workspace).
    """
    if not argv or not os.path.isabs(argv[0]):
        raise ProgramNotFound(argv[0] if argv else "", "the guard runs programs by absolute path")
    return subprocess.run(
        list(argv),
        cwd=os.fspath(cwd) if cwd is not None else _empty_home(),
        env=dict(env) if env is not None else minimal_env(),
        input=input_bytes,
        stdin=None if input_bytes is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
