"""Every live sidecar of a guard home, as a screen outside pi reaches them (their sockets).

Contract: :func:`sidecar_dirs` lists the sidecars' directories (live or not);
:func:`ask_sidecar` gives a sidecar's reply or ``None`` when nothing listens (it ended);
:func:`pending_in` yields every pending question of every live sidecar, with the sidecar
that holds it. Shared by ``pi-guard approvals`` and its page (``approvals serve``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guard._approvals.local import ask_local
from guard._approvals.model import Pending
from guard._errors import StateError
from guard._home import SESSIONS_DIR
from guard._logging import get_logger

__all__ = ["GONE", "REPLY_TIMEOUT", "Listed", "ask_sidecar", "pending_in", "sidecar_dirs"]

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
