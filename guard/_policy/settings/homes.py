"""Every guard home this user's guard has opened, so each is kept from the agent.

A session's sandbox hides its own guard home; another home (``$PI_OPERATOR_GUARD_HOME``
elsewhere, another install's, one under ``/var/tmp``) would otherwise be visible to the
agent's commands, signing key and approval sockets included. Each home the guard opens is
noted in one file of the user's, ``${XDG_STATE_HOME:-~/.local/state}/pi-operator-guard/homes``
(one absolute path a line, the newest last, at most :data:`MAX_KNOWN_HOMES`); the sandbox
hides every one that still exists and the policy blocks them to pi's file tools. The file
lies in the user's home (hidden from the sandbox) and is blocked to the agent's writes.
Never raises: a registry that cannot be read or written hides nothing more than before.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from guard._home import STATE_HOME_ENV

__all__ = ["MAX_KNOWN_HOMES", "known_homes", "known_homes_file", "remember_home"]

MAX_KNOWN_HOMES = 32
_MAX_BYTES = 64 << 10


def known_homes_file() -> Path:
    """Where the homes are noted (``$XDG_STATE_HOME`` or ``~/.local/state``)."""
    state = os.environ.get(STATE_HOME_ENV, "")
    base = Path(state) if state.startswith("/") else Path.home() / ".local" / "state"
    return base / "pi-operator-guard" / "homes"


def _read(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(_MAX_BYTES)
    except OSError:
        return []
    return [line for line in text.splitlines() if line.startswith("/") and "\0" not in line]


def known_homes() -> tuple[str, ...]:
    """The homes noted that still are directories, newest last."""
    return tuple(h for h in dict.fromkeys(_read(known_homes_file())) if os.path.isdir(h))


def remember_home(home: Path) -> None:
    """Note ``home`` (its real path) as one of this user's guard homes."""
    real = os.path.realpath(home)
    path = known_homes_file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "r+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            noted = [h for h in _read(path) if h != real and os.path.isdir(h)]
            kept = [*noted, real][-MAX_KNOWN_HOMES:]
            if kept == _read(path):
                return
            handle.seek(0)
            handle.truncate()
            handle.write("".join(f"{h}\n" for h in kept))
