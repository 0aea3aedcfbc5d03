"""What a command lost inside a repository's ``.git``: the history git keeps is work too.

A command that writes ``.git`` is mostly git's bookkeeping (the index, new objects, a ref
moving on with its reflog growing). What cannot be brought back afterwards is held:

* a ref deleted (``branch -D``, ``stash clear``, ``update-ref -d``, ``rm -rf .git && git
  init``), unless ``packed-refs`` now holds it with the same value (``git pack-refs``);
* a reflog that lost entries (``reflog expire``, ``stash drop``): after the command it no
  longer starts with what it held before (``git`` only appends to it otherwise), or is gone;
* a ref removed from ``packed-refs``;
* a ref that moved (a loose ref rewritten, a value in ``packed-refs`` changed) whose old
  value no ref and no reflog names after the command: a tag moved (``git tag -f``, tags
  have no reflog), a branch rewritten by hand or with its reflog switched off;
* objects gone (``gc --prune``, a loose object or a pack deleted) that no pack or loose
  object of the repository holds after the command, and a pack or its index rewritten in
  place (git never does: they are named by their content);
* a submodule's repository (``.git/modules/<name>``) deleted, and each of these inside it.

A ref moving backwards (``reset --hard HEAD~1``) loses nothing while its reflog keeps the old
value; rewriting the reflog or pruning is what loses it, and that is held. Each command is
judged against the repository as it was before it, so a loss spread over several commands is
held at the command that takes the last ref, reflog entry or object that kept it: what the
operator had is never lost step by step.
"""

from __future__ import annotations

import os
import stat
import struct

from guard._effects.layer import OPAQUE_XATTR, is_whiteout
from guard._effects.model import Effect

__all__ = ["git_loss", "steers_git"]

_HEX = frozenset("0123456789abcdef")
_STEERING = frozenset(
    {
        ("objects", "info", "alternates"), ("objects", "info", "http-alternates"),
        ("info", "attributes"), ("info", "grafts"), ("info", "sparse-checkout"),
        ("shallow",), ("commondir",), ("config",), ("config.worktree",),
    }
)  # fmt: skip
"""Files of a git directory that change what the operator's git reads or runs: objects
borrowed from elsewhere (gitrepository-layout(5)), attributes that pick drivers
(gitattributes(5)), history cut or grafted, the checkout narrowed, the common directory
moved, the config; with ``hooks`` they are what pi's ``write`` tool asks about in ``.git``."""


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


def _git_dir(parts: list[str], workspace: str) -> tuple[str, list[str]]:
    """The git directory (relative) a path is in, and the path inside it: the ``.git``
    directory, or a submodule's repository in its ``modules`` (one with a ``HEAD``)."""
    at = len(parts) - 1 - parts[::-1].index(".git")
    git_dir, inside = "/".join(parts[: at + 1]), parts[at + 1 :]
    while inside[:1] == ["modules"]:
        nested = next(
            (
                n
                for n in range(len(inside), 1, -1)
                if os.path.isfile(os.path.join(workspace, git_dir, *inside[:n], "HEAD"))
            ),
            None,
        )
        if nested is None:
            break
        git_dir, inside = "/".join([git_dir, *inside[:nested]]), inside[nested:]
        if not inside:
            return git_dir, ["."]  # the submodule's repository itself
    return git_dir, inside


def _ref_after(workspace: str, upper: str, git_dir: str, name: str) -> str | None:
    """The value ref ``name`` has after the command (its loose file, else packed-refs)."""
    loose = _read(_after(workspace, upper, f"{git_dir}/{name}"))
    if loose is not None:
        return loose.strip().decode(errors="replace")
    return _packed(_read(_after(workspace, upper, f"{git_dir}/packed-refs"))).get(name)


def _files_after(workspace: str, upper: str, rel: str) -> list[str]:
    """Every file beneath directory ``rel`` after the command (relative paths)."""
    out: list[str] = []
    for name in _listing(workspace, upper, rel):
        child = f"{rel}/{name}"
        where = _after(workspace, upper, child)
        if where is not None and os.path.isdir(where) and not os.path.islink(where):
            out += _files_after(workspace, upper, child)
        elif where is not None:
            out.append(child)
    return out


def _kept(workspace: str, upper: str, git_dir: str, name: str, value: str) -> bool:
    """Whether a ref's old ``value`` is still named after the command: by a ref, or by a
    reflog entry (its own reflog first). A symbolic ref names no commit."""
    if not value or value.startswith("ref:"):
        return True
    word = value.encode()
    own = _read(_after(workspace, upper, f"{git_dir}/logs/{name}"))
    if own is not None and word in own:
        return True
    for log in _files_after(workspace, upper, f"{git_dir}/logs"):
        data = _read(_after(workspace, upper, log))
        if data is not None and word in data:
            return True
    refs = _packed(_read(_after(workspace, upper, f"{git_dir}/packed-refs")))
    for ref in _files_after(workspace, upper, f"{git_dir}/refs"):
        loose = (_read(_after(workspace, upper, ref)) or b"").strip()
        refs[ref.removeprefix(f"{git_dir}/")] = loose.decode(errors="replace")
    return any(v == value for n, v in refs.items() if n != name)  # a loose file shadows


def steers_git(rel: str, workspace: str) -> bool:
    """Whether ``rel`` (relative to the workspace) is a file that steers a repository's
    git (:data:`_STEERING`, a live hook): a command writing it is held like a protected
    path, as pi's ``write`` tool asks about it."""
    parts = rel.split("/")
    if ".git" not in parts:
        return False
    _, inside = _git_dir(parts, workspace)
    if inside[:1] == ["hooks"]:
        return not inside[-1].endswith(".sample")
    return tuple(inside) in _STEERING


def git_loss(effect: Effect, workspace: str, upper: str) -> bool:
    """Whether this effect inside a ``.git`` directory loses history (see the module)."""
    parts = effect.path.split("/")
    if ".git" not in parts:
        return False
    git_dir, inside = _git_dir(parts, workspace)
    if not inside:
        return False
    low = os.path.join(workspace, effect.path)
    top = inside[0]
    if inside == ["."]:
        return effect.kind in ("deleted", "replaced")  # a submodule's whole repository
    if top in ("refs", "logs") and effect.kind in ("deleted", "replaced"):
        if top == "refs" and effect.was == "file" and len(inside) > 1:
            value = (_read(low) or b"").strip().decode(errors="replace")
            after = _packed(_read(_after(workspace, upper, f"{git_dir}/packed-refs")))
            return after.get("/".join(inside)) != value
        return True
    if top == "refs" and effect.kind == "created":
        return _shadowed(workspace, upper, git_dir, "/".join(inside))
    if top == "refs" and effect.kind == "modified" and len(inside) > 1:
        name = "/".join(inside)
        value = (_read(low) or b"").strip().decode(errors="replace")
        return not _kept(workspace, upper, git_dir, name, value)
    if top == "logs" and effect.kind == "modified":
        before, now = _read(low), _read(os.path.join(upper, effect.path))
        return before is None or now is None or not now.startswith(before)
    if inside == ["packed-refs"] and effect.kind in ("modified", "deleted", "replaced"):
        return _packed_lost(workspace, upper, git_dir, low)
    if top == "objects" and effect.kind in ("deleted", "replaced", "modified"):
        return _objects_lost(effect, workspace, upper, git_dir, inside)
    return False


def _shadowed(workspace: str, upper: str, git_dir: str, name: str) -> bool:
    """A new loose ref (or a new directory of them) over a packed ref of another value:
    the ref moved (``git tag -f`` of a packed tag), its old value named nowhere after."""
    packed = _packed(_read(os.path.join(workspace, git_dir, "packed-refs")))
    refs = [name]
    if os.path.isdir(os.path.join(upper, git_dir, name)):
        under = _files_after(workspace, upper, f"{git_dir}/{name}")
        refs = [r.removeprefix(f"{git_dir}/") for r in under]
    for ref in refs:
        old = packed.get(ref)
        now = _ref_after(workspace, upper, git_dir, ref)
        if old is not None and now != old and not _kept(workspace, upper, git_dir, ref, old):
            return True
    return False


def _packed_lost(workspace: str, upper: str, git_dir: str, low: str) -> bool:
    """A ref ``packed-refs`` held that is gone or moved after the command (a loose file
    takes precedence, before and after), its old value named by no ref or reflog."""
    for name, packed in _packed(_read(low)).items():
        loose = _read(os.path.join(workspace, git_dir, name))
        value = loose.strip().decode(errors="replace") if loose is not None else packed
        now = _ref_after(workspace, upper, git_dir, name)
        if now is None:
            return True
        if now != value and not _kept(workspace, upper, git_dir, name, value):
            return True
    return False


def _objects_lost(
    effect: Effect, workspace: str, upper: str, git_dir: str, inside: list[str]
) -> bool:
    """Objects the deletion (or rewrite) took that the repository no longer holds."""
    low = os.path.join(workspace, effect.path)
    if len(inside) < 2:
        return True
    if inside[1] == "pack":
        if effect.kind != "deleted" and low.endswith((".pack", ".idx")):
            return True  # rewritten in place: no longer what its name says
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
