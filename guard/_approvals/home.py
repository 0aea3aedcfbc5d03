"""Every live sidecar of a guard home, as a screen outside pi reaches them (their sockets).

Contract: :func:`sidecar_dirs` lists the sidecars' directories (live or not);
:func:`ask_sidecar` gives a sidecar's reply or ``None`` when nothing listens (it ended);
:func:`pending_in` yields every pending question of every live sidecar, with the sidecar
that holds it. Shared by ``pi-guard approvals`` and its page (``approvals serve``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guard._approvals.local import ask_local
from guard._approvals.model import Pending
from guard._errors import StateError
from guard._home import SESSIONS_DIR
from guard._logging import get_logger

__all__ = [
    "GONE",
    "REPLY_TIMEOUT",
    "Listed",
    "ask_sidecar",
    "pending_in",
    "port_holder",
    "sidecar_about",
    "sidecar_dirs",
]

_log = get_logger("guard.approvals")

REPLY_TIMEOUT = 5.0
"""Seconds to wait for one sidecar's reply."""
GONE = (ConnectionRefusedError, FileNotFoundError, NotADirectoryError)
"""Nothing listens there: the sidecar ended (or never had the port)."""


class Listed(Pending):
    """One pending question, exactly as its sidecar offers it, and which sidecar holds it."""

    sidecar: str
    """The sidecar's directory under ``<home>/sessions/`` (``s<pid>-<hex>``)."""


def sidecar_dirs(home: Path) -> list[Path]:
    """Every sidecar directory of the home, live or not."""
    root = home / SESSIONS_DIR
    if not root.is_dir():
        return []
    try:
        entries = sorted(root.iterdir())
    except OSError as exc:
        raise StateError(root, f"cannot be read: {exc.strerror}") from None
    return [p for p in entries if p.is_dir() and not p.is_symlink()]


def ask_sidecar(
    directory: Path, request: dict[str, Any], timeout: float = REPLY_TIMEOUT
) -> dict[str, Any] | None:
    """The sidecar's reply; ``None`` when it cannot be had (logged unless it simply ended)."""
    try:
        return ask_local(directory, request, timeout)
    except GONE:
        _log.debug("approvals.sidecar_gone", sidecar=directory.name)
    except (OSError, ValueError) as exc:
        _log.warning("approvals.no_reply", sidecar=directory.name, error=str(exc))
    return None


def pending_in(home: Path) -> Iterator[Listed]:
    """Every pending question of every live sidecar of the home."""
    for directory in sidecar_dirs(home):
        reply = ask_sidecar(directory, {"op": "list"})
        if reply is None:
            continue
        items = reply.get("pending")
        if not isinstance(items, list):
            _log.warning("approvals.list_refused", sidecar=directory.name, reply=reply)
            continue
        try:
            pending = [Pending.model_validate(i, by_alias=True, by_name=False) for i in items]
        except ValidationError as exc:
            _log.warning("approvals.list_invalid", sidecar=directory.name, error=str(exc))
            continue
        for one in pending:
            yield Listed(**one.model_dump(), sidecar=directory.name)


def sidecar_about(directory: Path) -> dict[str, Any]:
    """What a live sidecar says of itself (op ``about``): ``sessionId``, ``cwd`` (its pi
    session's folder) and ``page``; empty when it does not answer or says nothing."""
    reply = ask_sidecar(directory, {"op": "about"}, timeout=1.0) or {}
    about = reply.get("about")
    return about if isinstance(about, dict) else {}


def port_holder(home: Path, port: int) -> str | None:
    """Which live pi session of the home listens on ``port`` of 127.0.0.1 (its approval
    page), in words: ``pi session <id> (pid N, in <folder>)``; ``None`` when no sidecar of
    the home does (another program, or not Linux: ``/proc`` says who listens)."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for directory in sidecar_dirs(home):
        pid = directory.name[1:].split("-", 1)[0]
        if not pid.isdigit() or not _holds(int(pid), inodes):
            continue
        about = sidecar_about(directory)
        session = about.get("sessionId") if isinstance(about.get("sessionId"), str) else None
        folder = about.get("cwd") if isinstance(about.get("cwd"), str) else None
        named = f"pi session {session}" if session else "a pi session"
        return f"{named} (pid {pid}" + (f", in {folder})" if folder else ")")
    return None


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (IPv4 and IPv6), from ``/proc/net``."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and fields[1].endswith(f":{port:04X}"):
                found.add(fields[9])
    return found


def _holds(pid: int, inodes: set[str]) -> bool:
    """Process ``pid`` has one of the sockets ``inodes`` open."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False
