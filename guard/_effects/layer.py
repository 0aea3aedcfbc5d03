"""Reading what a command did from its overlay layer (Linux overlayfs, ``userxattr``).

The command saw the workspace through an overlay: the real workspace below (``lower``), an
empty directory above (``upper``) that took every change. What the upper directory holds,
read against the lower one, is the command's effect (Documentation/filesystems/overlayfs):

* a character device 0/0 is a *whiteout*: the lower entry was deleted;
* a directory with the ``user.overlay.opaque`` attribute was deleted and made again: nothing
  of the lower one shows through it (nor through any directory below it);
* any other entry is new or copied up: compared with the lower entry it is created,
  modified, replaced by another type, or only had its mode changed.

A new directory is one effect (with its file count and bytes), not one per file, and so is
a deleted one: ``npm install`` is a handful of effects, not fifty thousand.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from guard._effects.model import Effect

__all__ = [
    "OPAQUE_XATTR",
    "changed_since",
    "is_whiteout",
    "layer_made",
    "layer_paths",
    "link_above",
    "read_effects",
    "tree_size",
]

OPAQUE_XATTR = "user.overlay.opaque"
_CHUNK = 1 << 16


def is_whiteout(info: os.stat_result) -> bool:
    """An overlay whiteout: a character device numbered 0/0."""
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _kind(info: os.stat_result | None) -> str:
    if info is None:
        return "none"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISLNK(info.st_mode):
        return "link"
    return "file"


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def tree_size(path: str) -> tuple[int, int]:
    """Files (links count as files) and bytes beneath ``path`` (a file: itself)."""
    info = _lstat(path)
    if info is None:
        return 0, 0
    if not stat.S_ISDIR(info.st_mode):
        return 1, info.st_size if stat.S_ISREG(info.st_mode) else 0
    files = size = 0
    for root, dirs, names in os.walk(path):
        for name in names:
            entry = _lstat(os.path.join(root, name))
            files += 1
            size += entry.st_size if entry is not None and stat.S_ISREG(entry.st_mode) else 0
        for name in dirs:
            if os.path.islink(os.path.join(root, name)):
                files += 1
    return files, size


def _same_content(a: str, b: str, size: int) -> bool:
    if _lstat(b) is None or os.lstat(b).st_size != size:
        return False
    with open(a, "rb") as left, open(b, "rb") as right:
        while True:
            chunk = left.read(_CHUNK)
            if chunk != right.read(_CHUNK):
                return False
            if not chunk:
                return True


def _has_whiteout(path: str) -> bool:
    for root, _dirs, names in os.walk(path):
        for name in names:
            entry = _lstat(os.path.join(root, name))
            if entry is not None and is_whiteout(entry):
                return True
    return False


def _created(rel: str, path: str, info: os.stat_result, was: str = "none") -> Effect:
    kind = "created" if was == "none" else "replaced"
    files, size = tree_size(path)
    conflict = stat.S_ISDIR(info.st_mode) and _has_whiteout(path)
    return Effect(
        kind=kind,
        path=rel,
        kind_of=_kind(info),
        was=was,
        size=size,
        files=files,
        mode=stat.S_IMODE(info.st_mode),
        target=os.readlink(path) if stat.S_ISLNK(info.st_mode) else None,
        conflict=conflict,
    )


def _deleted(rel: str, lower: str, info: os.stat_result) -> Effect:
    files, size = tree_size(lower)
    return Effect(
        kind="deleted",
        path=rel,
        kind_of="none",
        was=_kind(info),
        before=size,
        files=files,
    )


def read_effects(upper: str | os.PathLike[str], lower: str | os.PathLike[str]) -> list[Effect]:
    """Every effect the layer ``upper`` has over ``lower``, parents before children."""
    return list(_walk(os.fspath(upper), os.fspath(lower), "", merged=True))


def _walk(upper: str, lower: str, rel: str, *, merged: bool) -> Iterator[Effect]:
    """``merged``: the lower directory shows through this one (no opaque one above)."""
    up_dir = os.path.join(upper, rel)
    low_dir = os.path.join(lower, rel)
    names = sorted(os.listdir(up_dir))
    if not merged and os.path.isdir(low_dir) and not os.path.islink(low_dir):
        # Nothing below shows through: what the lower directory has and this one has not
        # is deleted.
        present = set(names)
        for gone in sorted(os.listdir(low_dir)):
            if gone not in present:
                info = os.lstat(os.path.join(low_dir, gone))
                yield _deleted(_join(rel, gone), os.path.join(low_dir, gone), info)
    for name in names:
        child = _join(rel, name)
        up = os.path.join(up_dir, name)
        low = os.path.join(low_dir, name)
        info = os.lstat(up)
        before = _lstat(low)
        was = _kind(before)
        if is_whiteout(info):
            if before is not None:
                yield _deleted(child, low, before)
            continue
        now = _kind(info)
        if now == "dir":
            if was == "dir":
                assert before is not None
                if stat.S_IMODE(info.st_mode) != stat.S_IMODE(before.st_mode):
                    yield Effect(
                        kind="mode-changed",
                        path=child,
                        kind_of="dir",
                        was="dir",
                        mode=stat.S_IMODE(info.st_mode),
                    )
                yield from _walk(upper, lower, child, merged=merged and not _opaque(up))
            else:
                yield _created(child, up, info, was)
            continue
        if was == "none" or was != now:
            yield _created(child, up, info, was)
            continue
        assert before is not None
        if now == "link":
            if os.readlink(up) != os.readlink(low):
                yield Effect(
                    kind="modified",
                    path=child,
                    kind_of="link",
                    was="link",
                    target=os.readlink(up),
                )
            continue
        regular = stat.S_ISREG(info.st_mode) and stat.S_ISREG(before.st_mode)
        if (regular and not _same_content(up, low, info.st_size)) or (
            not regular and (info.st_mode, info.st_rdev) != (before.st_mode, before.st_rdev)
        ):
            yield Effect(
                kind="modified",
                path=child,
                kind_of="file",
                was="file",
                size=info.st_size,
                before=before.st_size,
                mode=stat.S_IMODE(info.st_mode),
            )
        elif stat.S_IMODE(info.st_mode) != stat.S_IMODE(before.st_mode):
            yield Effect(
                kind="mode-changed",
                path=child,
                kind_of="file",
                was="file",
                mode=stat.S_IMODE(info.st_mode),
            )


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def layer_paths(root: Path, layer_id: str) -> tuple[Path, Path, Path]:
    """The layer directory, its upper and its work directory."""
    layer = root / layer_id
    return layer, layer / "upper", layer / "work"


def link_above(workspace: str, rel: str) -> bool:
    """Whether a directory between ``workspace`` and ``rel`` is a symlink now.

    A layer holds real paths, so one that is there means the workspace changed under the
    command; reviewing or applying through it would reach somewhere else.
    """
    current = workspace
    for part in rel.split("/")[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current):
            return True
    return False


def layer_made(layer: str | os.PathLike[str]) -> int:
    """When the command's layer was made (ns): the layer directory's last entry (its upper
    and work directories, the caches' layers) is made just before the overlay is mounted and
    the command starts; nothing writes into it again until the review."""
    return os.stat(layer).st_mtime_ns


def changed_since(path: str, since: int) -> bool:
    """Whether the workspace's ``path`` (a directory: anything beneath it) changed at or
    after ``since`` (ns): its inode's change time, which the kernel sets on every write,
    rename, link or mode change and no unprivileged process sets back. A layer records what
    the command did to what it saw; what changed under it since is not what it saw."""
    info = _lstat(path)
    if info is None:
        return False
    if info.st_ctime_ns >= since:
        return True
    if not stat.S_ISDIR(info.st_mode):
        return False
    for root, dirs, names in os.walk(path):
        for name in [*dirs, *names]:
            entry = _lstat(os.path.join(root, name))
            if entry is not None and entry.st_ctime_ns >= since:
                return True
    return False
