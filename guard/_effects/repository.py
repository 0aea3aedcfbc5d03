"""What a command lost inside a repository's ``.git``: the history git keeps is work too.

A command that writes ``.git`` is mostly git's bookkeeping (the index, new objects, a ref
moving on with its reflog growing). What cannot be brought back afterwards is held:

* a ref deleted (``branch -D``, ``stash clear``, ``update-ref -d``, ``rm -rf .git && git
  init``), unless ``packed-refs`` now holds it with the same value (``git pack-refs``);
* a reflog that lost entries (``reflog expire``, ``stash drop``): after the command it no
  longer starts with what it held before (``git`` only appends to it otherwise), or is gone;
* a ref removed from ``packed-refs``;
* objects gone (``gc --prune``, a loose object or a pack deleted) that no pack or loose
  object of the repository holds after the command.

A ref moving backwards (``reset --hard HEAD~1``) loses nothing while its reflog keeps the old
value; rewriting the reflog or pruning is what loses it, and that is held.
"""

from __future__ import annotations

import os
import stat
import struct

from guard._effects.layer import OPAQUE_XATTR, is_whiteout
from guard._effects.model import Effect

__all__ = ["git_loss"]

_HEX = frozenset("0123456789abcdef")


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _hidden(upper: str, rel: str) -> bool:
    """Whether the lower ``rel`` no longer shows through: a whiteout at it or an opaque
    directory (or a whiteout) above it in the layer."""
    parts = rel.split("/")
    for depth in range(1, len(parts) + 1):
        here = os.path.join(upper, *parts[:depth])
        info = _lstat(here)
        if info is None:
            continue
        if is_whiteout(info):
            return True
        if depth < len(parts) and (not stat.S_ISDIR(info.st_mode) or _opaque(here)):
            return True
    return False


def _after(workspace: str, upper: str, rel: str) -> str | None:
    """Where ``rel`` is after the command (the layer's copy, else the workspace's), or None."""
    up = os.path.join(upper, rel)
    info = _lstat(up)
    if info is not None:
        return None if is_whiteout(info) else up
    if _hidden(upper, rel):
        return None
    low = os.path.join(workspace, rel)
    return low if _lstat(low) is not None else None


def _listing(workspace: str, upper: str, rel: str) -> list[str]:
    """The names in directory ``rel`` after the command."""
    names: set[str] = set()
    up = os.path.join(upper, rel)
    if os.path.isdir(up) and not os.path.islink(up):
        names.update(n for n in os.listdir(up) if not is_whiteout(os.lstat(os.path.join(up, n))))
    low = os.path.join(workspace, rel)
    shows = not _hidden(upper, rel) and not (os.path.isdir(up) and _opaque(up))
    if shows and os.path.isdir(low) and not os.path.islink(low):
        names.update(n for n in os.listdir(low) if not _hidden(upper, f"{rel}/{n}"))
    return sorted(names)


def _read(path: str | None) -> bytes | None:
    if path is None or not os.path.isfile(path) or os.path.islink(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


def _packed(data: bytes | None) -> dict[str, str]:
    refs: dict[str, str] = {}
    for line in (data or b"").splitlines():
        if line[:1] in (b"#", b"^") or b" " not in line:
            continue
        value, _, name = line.decode(errors="replace").partition(" ")
        refs[name.strip()] = value
    return refs


def _idx_objects(path: str) -> set[str] | None:
    """The object ids a pack index (version 2) lists; None when it cannot be read."""
    data = _read(path)
    if data is None or data[:4] != b"\377tOc" or struct.unpack(">I", data[4:8])[0] != 2:
        return None
    count = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
    start = 8 + 256 * 4
    rest = len(data) - start
    width = 32 if count and rest >= count * (32 + 4 + 4) + 64 else 20
    names = data[start : start + count * width]
    return {names[i : i + width].hex() for i in range(0, len(names), width)}


def _loose(path: str) -> set[str]:
    """Loose object ids at ``path`` (an ``objects/xx`` directory or one object file)."""
    if os.path.isfile(path):
        head, tail = os.path.split(path)
        return {os.path.basename(head) + tail}
    out: set[str] = set()
    for dirpath, _dirs, names in os.walk(path):
        two = os.path.basename(dirpath)
        if len(two) == 2 and set(two) <= _HEX:
            out.update(two + n for n in names if set(n) <= _HEX)
    return out


def _pack_objects(path: str) -> set[str] | None:
    """The object ids of the packs at ``path`` (a pack, its index, or ``objects/pack``)."""
    if os.path.isdir(path):
        out: set[str] = set()
        for name in os.listdir(path):
            if name.endswith(".idx"):
                ids = _idx_objects(os.path.join(path, name))
                if ids is None:
                    return None
                out |= ids
        return out
    if path.endswith(".pack"):
        path = path[: -len(".pack")] + ".idx"
    if path.endswith(".idx"):
        return _idx_objects(path)
    return set()  # a .rev, .bitmap, .keep …: made again from the pack


def _git_dir(parts: list[str]) -> tuple[str, list[str]]:
    """The ``.git`` directory (relative) a path is in, and the path inside it."""
    at = len(parts) - 1 - parts[::-1].index(".git")
    return "/".join(parts[: at + 1]), parts[at + 1 :]


def git_loss(effect: Effect, workspace: str, upper: str) -> bool:
    """Whether this effect inside a ``.git`` directory loses history (see the module)."""
    parts = effect.path.split("/")
    if ".git" not in parts:
        return False
    git_dir, inside = _git_dir(parts)
    if not inside:
        return False
    low = os.path.join(workspace, effect.path)
    top = inside[0]
    if top in ("refs", "logs") and effect.kind in ("deleted", "replaced"):
        if top == "refs" and effect.was == "file" and len(inside) > 1:
            value = (_read(low) or b"").strip().decode(errors="replace")
            after = _packed(_read(_after(workspace, upper, f"{git_dir}/packed-refs")))
            return after.get("/".join(inside)) != value
        return True
    if top == "logs" and effect.kind == "modified":
        before, now = _read(low), _read(os.path.join(upper, effect.path))
        return before is None or now is None or not now.startswith(before)
    if inside == ["packed-refs"] and effect.kind in ("modified", "deleted", "replaced"):
        gone = set(_packed(_read(low))) - set(
            _packed(_read(_after(workspace, upper, f"{git_dir}/packed-refs")))
        )
        return any(_after(workspace, upper, f"{git_dir}/{name}") is None for name in gone)
    if top == "objects" and effect.kind in ("deleted", "replaced", "modified"):
        return _objects_lost(effect, workspace, upper, git_dir, inside)
    return False


def _objects_lost(
    effect: Effect, workspace: str, upper: str, git_dir: str, inside: list[str]
) -> bool:
    """Objects the deletion (or rewrite) took that the repository no longer holds."""
    low = os.path.join(workspace, effect.path)
    if len(inside) < 2:
        return True
    if inside[1] == "pack":
        ids = _pack_objects(low)
        if ids is None:
            return True  # an index it cannot read: it cannot say nothing was lost
        lost = ids
    elif len(inside[1]) == 2 and set(inside[1]) <= _HEX:
        if effect.kind != "deleted":
            return True  # an object rewritten in place is no longer what its name says
        lost = _loose(low)
    else:
        return False  # info/packs, commit-graph, multi-pack-index: made again from the rest
    return bool(lost - _objects_after(workspace, upper, git_dir))


def _objects_after(workspace: str, upper: str, git_dir: str) -> set[str]:
    """Every object id the repository holds after the command (its packs and loose ones)."""
    held: set[str] = set()
    objects = f"{git_dir}/objects"
    for two in _listing(workspace, upper, objects):
        if len(two) == 2 and set(two) <= _HEX:
            held.update(two + n for n in _listing(workspace, upper, f"{objects}/{two}"))
    for name in _listing(workspace, upper, f"{objects}/pack"):
        if name.endswith(".idx"):
            ids = _idx_objects(_after(workspace, upper, f"{objects}/pack/{name}") or "")
            held |= ids or set()
    return held
