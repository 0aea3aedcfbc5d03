"""The session's writable set: where the agent may write without asking.

One definition for both doors: pi's file tools (a write outside asks, ``builtin.outside-
workspace``) and the sandbox (what its commands can write). The set is the workspace and the
user policy's ``[sandbox] writable`` paths, except that a workspace that is ``/``, the user's
home or a parent of it is never writable: started there, the "project" would be every file
the operator owns, ``~/.bashrc`` included. The operator is asked to start pi in a project
folder instead (:data:`TOO_WIDE_HINT`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TOO_WIDE_HINT", "WritableSet", "too_wide", "within"]

TOO_WIDE_HINT = "start pi in a project folder (cd ~/your-project && pi)"


def within(path: str, root: str) -> bool:
    """``path`` is ``root`` or lies beneath it (both absolute and normalized)."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root.rstrip("/") + "/")


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def too_wide(workspace: str, home: str | None = None) -> str | None:
    """Why ``workspace`` may not be the writable workspace (``None`` when it may).

    Both are compared as real paths.
    """
    real = _real(workspace)
    user_home = _real(home if home is not None else "~")
    if real == "/":
        return "the workspace is / (the whole machine)"
    if real == user_home:
        return "the workspace is the home directory"
    if user_home != "/" and within(user_home, real):
        return f"the workspace {real} contains the home directory"
    return None


@dataclass(frozen=True, slots=True)
class WritableSet:
    """Real, absolute roots the agent may write beneath; :meth:`covers` checks a path."""

    roots: tuple[str, ...]
    narrowed: str | None = None  # why the workspace itself is not among them

    @classmethod
    def of(
        cls, workspace: str, extra: Sequence[str] = (), *, home: str | None = None
    ) -> WritableSet:
        """The workspace (unless :func:`too_wide`) and ``extra`` (``~`` expanded)."""
        why = too_wide(workspace, home)
        roots = [] if why else [_real(workspace)]
        roots += [_real(p) for p in extra]
        return cls(tuple(dict.fromkeys(roots)), why)

    def covers(self, path: str) -> bool:
        """``path`` (absolute, normalized; resolve it first for its real place) is inside."""
        return any(within(path, root) for root in self.roots)
