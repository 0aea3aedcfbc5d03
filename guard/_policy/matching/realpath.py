"""A fast ``realpath`` for symlink resolution of the paths a tool call touches."""

from __future__ import annotations

import os
import unicodedata

__all__ = ["realpath"]


def _slow_realpath(path: str) -> str:
    try:
        return unicodedata.normalize("NFC", os.path.realpath(path))
    except (OSError, ValueError):
        return path


_O_PATH: int | None = getattr(os, "O_PATH", None) if os.path.isdir("/proc/self/fd") else None


def realpath(path: str) -> str:
    """``os.path.realpath`` in a few system calls where the OS can do it (Linux ``O_PATH``).

    For a path that does not exist yet the parent is resolved and the name appended,
    so a new file in a symlinked directory still resolves; a dangling symlink resolves to
    its target, which a write through it would create.
    """
    o_path = _O_PATH
    if o_path is None:
        return _slow_realpath(path)
    suffix: list[str] = []
    current = path
    for _ in range(64):
        try:
            fd = os.open(current, o_path)
        except FileNotFoundError:
            if os.path.islink(current):
                # A dangling link: writing through it creates its target, which is where
                # the write really goes (os.path.realpath follows it without the target).
                return _slow_realpath(path)
            parent, name = os.path.split(current)
            if not name or parent == current:
                break
            suffix.append(name)
            current = parent
            continue
        except (OSError, ValueError):
            return _slow_realpath(path)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return _slow_realpath(path)
        finally:
            os.close(fd)
        joined = "/".join([real.rstrip("/"), *reversed(suffix)]) if suffix else real
        return unicodedata.normalize("NFC", joined or "/")
    return _slow_realpath(path)
