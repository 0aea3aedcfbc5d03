"""Which effects lose work, or touch a protected path: those are held for the operator.

A deletion or overwrite loses work when git cannot bring the old content back: a file that
is neither tracked with its committed content nor ignored (build output is ignored; it can
be made again), or anything where no repository holds the workspace. What lies in a
directory tools make again (:data:`REGENERABLE`: ``node_modules``, ``.venv``,
``__pycache__`` …) is never work. After an operator's
yes, what the command did beyond what the dialog named (its targets, resolved then) is held
too, whatever git could restore: the dialog was about those targets only. Any change to a
path the policy protects for writing is held as well.

Git is asked hermetically (guard/_hermetic.py) and only what it stores is compared: the
HEAD blob of a file against the object id of the content the command replaced.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from guard._effects.baseline import Baseline
from guard._effects.layer import changed_since, link_above, tree_size
from guard._effects.model import REGENERABLE, Effect, Hold, HoldReason
from guard._effects.repository import git_loss
from guard._hermetic import GIT_SAFE_OPTIONS, ProgramNotFound, git_env, run, system_program
from guard._policy import within

__all__ = ["REGENERABLE", "Baseline", "GitState", "judge"]

_LOSING = frozenset({"deleted", "modified", "replaced"})
_MAX_FILES = 50_000

Protected = Callable[[str], bool]
"""Whether a write to this absolute path is one the policy protects."""


@dataclass
class GitState:
    """What git knows of the workspace: its top level, HEAD's blobs, ignored paths."""

    top: str | None
    object_format: str = "sha1"
    head: dict[str, str] = field(default_factory=dict)
    _git: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, workspace: str) -> GitState:
        try:
            git = [system_program("git"), "-C", workspace, *GIT_SAFE_OPTIONS]
        except ProgramNotFound:
            return cls(None)
        done = run([*git, "rev-parse", "--show-toplevel", "--show-object-format"], env=git_env())
        if done.returncode != 0:
            return cls(None)
        top, _, fmt = done.stdout.decode().strip().partition("\n")
        state = cls(os.path.realpath(top), fmt.strip() or "sha1", _git=git)
        return state

    def load_head(self, paths: Iterable[str], rev: str = "HEAD") -> None:
        """Learn ``rev``'s blob ids for ``paths`` (relative to the top; directories recurse)."""
        wanted = [p for p in paths if p]
        if self.top is None or not wanted:
            return
        for start in range(0, len(wanted), 512):
            done = run(
                [*self._git, "-C", self.top, "ls-tree", "-r", "-z", "--full-tree", rev, "--",
                 *wanted[start : start + 512]],
                env=git_env(),
            )  # fmt: skip
            for entry in done.stdout.split(b"\0"):
                meta, _, path = entry.partition(b"\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == b"blob":
                    self.head[path.decode(errors="surrogateescape")] = parts[2].decode()

    def ignored(self, paths: Sequence[str]) -> set[str]:
        """Which of ``paths`` (relative to the top) git ignores and does not track."""
        if self.top is None or not paths:
            return set()
        done = run(
            [*self._git, "-C", self.top, "check-ignore", "-z", "--stdin"],
            env=git_env(),
            input_bytes=b"\0".join(p.encode(errors="surrogateescape") for p in paths) + b"\0",
        )
        return {p.decode(errors="surrogateescape") for p in done.stdout.split(b"\0") if p}

    def object_id(self, path: str) -> str:
        """The blob id git would give the file at ``path`` (absolute) as it is now."""
        with open(path, "rb") as handle:
            data = handle.read()
        digest = hashlib.sha256 if self.object_format == "sha256" else hashlib.sha1
        return digest(b"blob %d\0" % len(data) + data).hexdigest()


class _TooMany(Exception):
    """More files than the review examines one by one: it never judges a sample."""


def _files_under(path: str) -> list[str]:
    """Every file (and link) under ``path``; :class:`_TooMany` past ``_MAX_FILES``."""
    if not os.path.isdir(path) or os.path.islink(path):
        return [path]
    out: list[str] = []
    for root, dirs, names in os.walk(path):
        out += [os.path.join(root, n) for n in names]
        out += [os.path.join(root, d) for d in dirs if os.path.islink(os.path.join(root, d))]
        if len(out) > _MAX_FILES:
            raise _TooMany(path)
    return out


def _lost(
    state: GitState, lower: list[str], baseline: Baseline | None = None
) -> tuple[HoldReason | None, int, int]:
    """Whether replacing or deleting these lower files loses work: reason, files, bytes.

    Ignored means ignored against ``baseline`` (ignored then, or now by its unchanged rules)
    and never the operator's untracked work in it."""
    if state.top is None:
        files, size = 0, 0
        for path in lower:
            count, nbytes = tree_size(path)
            files, size = files + count, size + nbytes
        return ("not-in-git" if files else None), files, size
    top = state.top
    rel = [os.path.relpath(p, top) for p in lower]
    ignored = state.ignored([r for r in rel if r not in state.head])
    if baseline is not None and baseline.top == top:
        ignored = {i for i in ignored if baseline.judged_ignored(i, True)}
    lost_files = lost_bytes = 0
    reason: HoldReason | None = None
    for path, name in zip(lower, rel, strict=True):
        if name in ignored or any(name.startswith(i + "/") for i in ignored):
            continue
        blob = state.head.get(name)
        if blob is not None and not os.path.islink(path) and state.object_id(path) == blob:
            continue
        lost_files += 1
        lost_bytes += os.lstat(path).st_size if os.path.isfile(path) else 0
        reason = "uncommitted" if blob is not None else (reason or "untracked")
    if reason is not None and baseline is not None and baseline.top == top:
        # A baseline walk cut short knows no ignored path and no work: held, never judged
        # from a sample.
        reason = reason if baseline.complete else "unexamined"
    return reason, lost_files, lost_bytes


class _MovedContent:
    """The content of files the command created, by size then digest (built lazily)."""

    def __init__(
        self, effects: Sequence[Effect], upper: str, git: Callable[[], GitState], workspace: str
    ) -> None:
        self._upper = upper
        self._created = [
            os.path.join(upper, e.path) for e in effects if e.kind in ("created", "replaced")
        ]
        self._git = git
        self._workspace = workspace
        self._by_size: dict[int, list[str]] | None = None
        self._digests: dict[str, bytes] = {}

    def _index(self) -> dict[int, list[str]]:
        if self._by_size is None:
            self._by_size = {}
            files = []
            for path in self._created:
                try:
                    under = _files_under(path)
                except _TooMany:
                    continue  # not indexed: nothing counts as moved there (fail closed)
                files += [f for f in under if os.path.isfile(f) and not os.path.islink(f)]
            for file in self._as_work(files):
                self._by_size.setdefault(os.path.getsize(file), []).append(file)
        return self._by_size

    def _as_work(self, files: list[str]) -> list[str]:
        """The files whose place is judged as work: content moved anywhere else (into a
        regenerable folder, a ``.pyc`` name, an ignored place, ``.git``) is not kept by the
        move, as a later command may delete it there unasked."""
        rel = {f: os.path.relpath(f, self._upper) for f in files}
        kept = [f for f in files if not _never_work(rel[f].split("/"))]
        state = self._git()
        if state.top is None or not kept:
            return kept
        top = {f: os.path.relpath(os.path.join(self._workspace, rel[f]), state.top) for f in kept}
        ignored = state.ignored([t for t in top.values() if not t.startswith("..")])
        return [f for f in kept if not top[f].startswith("..") and not _inside(top[f], ignored)]

    def _digest(self, path: str) -> bytes:
        if path not in self._digests:
            with open(path, "rb") as handle:
                self._digests[path] = hashlib.file_digest(handle, "sha256").digest()
        return self._digests[path]

    def has(self, lower: str) -> bool:
        """Whether a file with exactly ``lower``'s content was created by the command."""
        if not os.path.isfile(lower) or os.path.islink(lower):
            return False
        candidates = self._index().get(os.path.getsize(lower), [])
        if not candidates:
            return False
        digest = self._digest(lower)
        return any(self._digest(c) == digest for c in candidates)


_SPECIAL = stat.S_ISUID | stat.S_ISGID


def _risky_mode(effect: Effect, path: str) -> bool:
    """A mode that arms or locks out: setuid/setgid or world-write added to what was there,
    the owner's read or write (a directory's search too) taken away; a new file or
    directory made setuid or setgid."""
    if effect.mode is None or effect.kind_of == "link":
        return False
    new = effect.mode
    if effect.kind == "created":
        return bool(new & _SPECIAL)
    if effect.kind not in ("mode-changed", "modified"):
        return False
    try:
        old = stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return True  # it cannot say what it was: hold
    owner = stat.S_IRWXU if effect.kind_of == "dir" else stat.S_IRUSR | stat.S_IWUSR
    added = new & ~old
    return bool(added & (_SPECIAL | stat.S_IWOTH) or old & owner & ~new)


def _never_work(parts: Sequence[str]) -> bool:
    """A place whose content the judge never counts as work (made again, or git's own)."""
    return (
        ".git" in parts
        or bool(REGENERABLE.intersection(parts))
        or parts[-1].endswith((".pyc", ".pyo"))
    )


def _new_ref(effect: Effect, parts: Sequence[str]) -> bool:
    """A ref created inside a repository's ``refs``: it may move a packed ref."""
    return effect.kind == "created" and ".git" in parts and "refs" in parts[parts.index(".git") :]


def _inside(name: str, ignored: set[str]) -> bool:
    return name in ignored or any(name.startswith(i.rstrip("/") + "/") for i in ignored)


def _counts(effect: Effect) -> dict[str, int]:
    """What an effect itself counts, files and bytes (a new directory: all it holds)."""
    if effect.kind == "deleted":
        return {"files": effect.files or 0, "bytes": effect.before or 0}
    if effect.kind == "mode-changed":
        return {"files": 1, "bytes": 0}
    return {"files": effect.files if effect.files is not None else 1, "bytes": effect.size or 0}


def _repository(parts: Sequence[str]) -> bool:
    """The repository itself: ``.git``, or its ``objects`` or ``refs`` as a whole."""
    return parts[-1] == ".git" or (len(parts) > 1 and parts[-2] == ".git" and parts[-1] in
                                   ("objects", "refs"))  # fmt: skip


def judge(
    effects: Sequence[Effect],
    workspace: str,
    *,
    protected: Protected,
    approved: Sequence[str] = (),
    upper: str | None = None,
    answered: bool = False,
    baseline: Baseline | None = None,
    since: int | None = None,
) -> list[Hold]:
    """The effects to hold, each with its reason (see the module docstring).

    ``upper``: the layer, so that content the command moved (``mv a b``: ``a`` deleted,
    ``b`` created with the same bytes) does not count as lost.

    ``approved``: the targets the operator said yes to for this call, as they resolved when
    the operator answered (none: there was no dialog). ``answered``: the operator (or a
    grant, or the operator's own allow rule) said yes to this call: what it did to git's
    history is what they said yes to (``git branch -D`` asks before it runs).

    ``baseline``: the untracked work the operator had when the session started, never
    judged ignored, whatever ignore file a command wrote since.

    ``since``: when the layer was made (ns). A path the workspace changed at or after it
    (a parallel call applied, pi's write tool, the operator's editor) is not what the
    command saw: its effect is held as a conflict, which is never applied (``rm -rf build``
    never removes what a parallel call moved into ``build`` meanwhile).
    """
    held: list[Hold] = []
    state: GitState | None = None
    targets = list(approved)

    def git() -> GitState:
        nonlocal state
        if state is None:
            state = GitState.of(workspace)
        return state

    moved = _MovedContent(effects, upper, git, workspace) if upper is not None else None
    for effect in effects:
        path = os.path.join(workspace, effect.path)
        if effect.conflict or link_above(workspace, effect.path):
            # The layer holds real paths; a link above this one in the workspace now means
            # it changed under the command: applying would write through the link.
            held.append(Hold(effect=effect, reason="conflict"))
            continue
        if since is not None and changed_since(path, since):
            held.append(Hold(effect=effect, reason="conflict", **_counts(effect)))
            continue
        if protected(path) and not (effect.kind_of != "dir" and path in targets):
            # A file the operator's yes named exactly (``cp .env.example .env``) was asked
            # about already; anything else protected is held.
            held.append(Hold(effect=effect, reason="protected", **_counts(effect)))
            continue
        if _risky_mode(effect, path):
            held.append(Hold(effect=effect, reason="mode", **_counts(effect)))
            continue
        parts = effect.path.split("/")
        if (effect.kind not in _LOSING or effect.was == "none") and not (
            _new_ref(effect, parts) and upper is not None and git_loss(effect, workspace, upper)
        ):
            continue
        if targets:
            if (
                answered
                and ".git" in parts
                and not _repository(parts)
                and upper is not None
                and not git_loss(effect, workspace, upper)
            ):
                continue  # git's bookkeeping (the index, ORIG_HEAD …) for the git they saw
            if not any(within(path, t) for t in targets):
                files, size = tree_size(path)
                held.append(Hold(effect=effect, reason="beyond-approval", files=files, bytes=size))
            continue
        if _repository(parts):
            files, size = tree_size(path)
            held.append(Hold(effect=effect, reason="repository", files=files, bytes=size))
            continue
        if (
            ".git" in parts
            and not answered
            and (upper is None or git_loss(effect, workspace, upper))
        ):
            files, size = tree_size(path)
            held.append(Hold(effect=effect, reason="repository", files=files, bytes=size))
            continue  # history lost: refs, reflog entries, stashes or objects
        if ".git" in parts:
            continue  # git's own bookkeeping (index, objects, refs) as a git command writes it
        if REGENERABLE.intersection(parts) or parts[-1].endswith((".pyc", ".pyo")):
            continue  # made again by the tool that made it
        state = git()
        if state.top is not None and within(path, state.top):
            # Committed means committed by the operator: HEAD as the baseline has it (a
            # baseline without one, no commit then or not taken: nothing is committed).
            ours = baseline is not None and baseline.top == state.top
            rev = baseline.head if baseline is not None and ours else "HEAD"
            if rev is not None:
                state.load_head([os.path.relpath(path, state.top)], rev)
        try:
            lower = _files_under(path)
        except _TooMany:
            files, size = tree_size(path)
            held.append(Hold(effect=effect, reason="unexamined", files=files, bytes=size))
            continue
        if moved is not None:
            lower = [f for f in lower if not moved.has(f)]
        reason, files, size = _lost(state, lower, baseline)
        if reason is not None:
            held.append(Hold(effect=effect, reason=reason, files=files, bytes=size))
    return _whole_repositories(effects, held)


def _whole_repositories(effects: Sequence[Effect], held: list[Hold]) -> list[Hold]:
    """A repository that lost history keeps all of the command's changes to it together:
    applying the rest (a ref moved, its reflog held) would leave it inconsistent."""
    lost = {_git_root(h.effect.path) for h in held if h.reason == "repository"} - {None}
    if not lost:
        return held
    done = {h.effect.path for h in held}
    for effect in effects:
        root = _git_root(effect.path)
        if (
            root in lost
            and effect.path not in done
            and not any(effect.path.startswith(p + "/") for p in done)
        ):
            held.append(Hold(effect=effect, reason="repository", **_counts(effect)))
    return held


def _git_root(path: str) -> str | None:
    """The ``.git`` directory a path is (or is in), relative; None outside any."""
    parts = path.split("/")
    if ".git" not in parts:
        return None
    return "/".join(parts[: len(parts) - parts[::-1].index(".git")])
