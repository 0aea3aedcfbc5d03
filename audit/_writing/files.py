"""The appender's durable file steps: whole writes, directory syncs, private directories,
the atomic replacement of a small file, and moving a torn tail aside.

Each step either completes durably or raises; none of them knows what a record is.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from audit._errors import LogWriteError
from audit._records.chain import pread_exact
from audit._records.wire import format_iso, utc_now

__all__ = ["fsync_dir", "make_private_dirs", "quarantine", "replace_file", "write_all"]

_COPY_CHUNK = 1 << 20


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may take fewer at a time)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each 0700; existing ones are left alone."""
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for item in reversed(missing):
        with contextlib.suppress(FileExistsError):
            item.mkdir(mode=0o700)


def replace_file(target: Path, content: bytes) -> None:
    """Replace ``target`` with ``content`` atomically: a fresh temporary file (never one
    planted at its name), ``fsync``, ``rename``, ``fsync`` of the directory. Raises
    ``OSError``; the temporary file is gone either way."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        try:
            write_all(fd, content)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(target.parent)


def quarantine(path: Path, fd: int, start: int, size: int) -> str:
    """Copy bytes ``[start, size)`` of the log ``path`` (open as ``fd``) to
    ``<log>.torn-<ts>`` and truncate the log to ``start``; return the copy's name.
    Raises :class:`audit.LogWriteError`."""
    stamp = format_iso(utc_now()).replace("-", "").replace(":", "")
    base = f"{path.name}.torn-{stamp}"
    try:
        for attempt in range(1, 1000):
            name = base if attempt == 1 else f"{base}-{attempt}"
            target = path.with_name(name)
            try:
                out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue
            break
        else:
            raise LogWriteError(path, "cannot find a free quarantine file name")
        try:
            offset = start
            while offset < size:
                chunk = pread_exact(fd, min(_COPY_CHUNK, size - offset), offset)
                if not chunk:
                    break
                write_all(out, chunk)
                offset += len(chunk)
            os.fsync(out)
        finally:
            os.close(out)
        fsync_dir(path.parent)
        os.ftruncate(fd, start)
        os.fsync(fd)
    except OSError as exc:
        raise LogWriteError(path, f"cannot quarantine a torn tail: {exc.strerror}") from None
    return name
