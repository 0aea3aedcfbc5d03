"""What the operator had: the baseline every "ignored", "committed" and "regenerable" is
judged against, never the state an earlier agent command made.

It is taken when the session starts (``sandbox.plan``) and again when the operator answers a
question, and keeps, relative to the repository's top:

* ``work``: the untracked files git did not ignore (the operator's work, whatever ignore
  file a command wrote since: ``printf '*\\n' > notes/.gitignore`` then ``rm -rf notes``);
  a later baseline never forgets what an earlier one had;
* ``ignored``: what git ignored then (directories collapsed);
* ``rules``: each ignore source then (every ``.gitignore``, ``.git/info/exclude`` and
  ``.git/config``, which may name an excludes file), by digest: a path that did not exist
  then is ignored "by the baseline's rules" only while every source on its way is unchanged;
* ``head``: the commit HEAD named, so that "committed" means committed by the operator
  (a commit an agent command made is not a way to make work look restorable);
* ``modified``: the tracked files whose content differed from HEAD (staged or not), every
  tracked file when there was no commit: with ``work``, what pi's ``write``/``edit`` asks
  before overwriting (:meth:`Baseline.holds_work`).

A workspace in no git repository keeps ``root`` (its real path) and ``work``: every file it
held (regenerable places skipped), which no repository can bring back, as the effects review
holds their loss through bash (``not-in-git``); pi's ``write``/``edit`` asks before
overwriting one. Work a command moved elsewhere stays work at its new name
(:meth:`Baseline.after`): ``mv notes.txt other.txt`` is applied as a move, and a ``write``
over ``other.txt`` then asks.

``complete`` False: it could not be taken whole (a git failure, more than 200,000 untracked
and ignored paths); nothing is then judged ignored against it, every loss in the repository
is held as unexamined unless the baseline's HEAD has it, and the quiet path asks for every
call (they fail closed, never judging a sample).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from guard._effects.model import REGENERABLE, Effect
from guard._hermetic import GIT_SAFE_OPTIONS, ProgramNotFound, git_env, run, system_program

__all__ = ["Baseline", "git_of"]

_MAX_BASELINE = 200_000
_SOURCES = (".git/info/exclude", ".git/config")


def git_of(workspace: str) -> tuple[list[str], str] | None:
    """The hermetic git argv for ``workspace`` and its repository's real top, or None."""
    try:
        git = [system_program("git"), "-C", workspace, *GIT_SAFE_OPTIONS]
    except ProgramNotFound:
        return None
    done = run([*git, "rev-parse", "--show-toplevel"], env=git_env())
    if done.returncode != 0:
        return None
    return git, os.path.realpath(done.stdout.decode(errors="surrogateescape").strip())


def _names(done_stdout: bytes) -> list[str]:
    return [n.decode(errors="surrogateescape") for n in done_stdout.split(b"\0") if n]


def _digest(path: str) -> str | None:
    try:
        if os.path.islink(path) or not os.path.isfile(path):
            return "special" if os.path.lexists(path) else None
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return "unreadable"


def _inside(name: str, paths: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + "/") for p in paths)


def _had(name: str, work: frozenset[str]) -> bool:
    """Whether ``name`` is in ``work``, or lies in a directory work was moved to."""
    parts = name.split("/")
    return any("/".join(parts[:n]) in work for n in range(1, len(parts) + 1))


@dataclass(frozen=True)
class Baseline:
    """What the operator had (see the module)."""

    top: str | None
    work: frozenset[str] = frozenset()
    complete: bool = True
    ignored: frozenset[str] = frozenset()
    rules: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    head: str | None = None
    modified: frozenset[str] = frozenset()
    root: str | None = None
    """A workspace in no git repository: its real path (``work`` is then every file in it)."""

    @classmethod
    def of(cls, workspace: str) -> Baseline:
        found = git_of(workspace)
        if found is None:
            return cls._outside_git(os.path.realpath(workspace))
        git, top = found
        env = git_env()
        others = run([*git, "-C", top, "ls-files", "--others", "--exclude-standard", "-z"], env=env)
        ignored = run(
            [*git, "-C", top, "ls-files", "--others", "--ignored", "--exclude-standard",
             "--directory", "-z"],
            env=env,
        )  # fmt: skip
        cached = run([*git, "-C", top, "ls-files", "--cached", "-z"], env=env)
        work, dropped, tracked = (
            _names(others.stdout),
            _names(ignored.stdout),
            _names(cached.stdout),
        )
        head = run([*git, "-C", top, "rev-parse", "--verify", "-q", "HEAD^{commit}"], env=env)
        operator_head = head.stdout.decode().strip() or None if head.returncode == 0 else None
        if (
            any(d.returncode != 0 for d in (others, ignored, cached))
            or len(work) + len(dropped) > _MAX_BASELINE
        ):
            # Cut short: no work and no ignored path known (held, asked), but "committed"
            # is still the operator's HEAD, never one a later agent command makes.
            return cls(top, complete=False, head=operator_head)
        if operator_head is None:
            modified = tracked  # nothing committed: every tracked file is work
        else:
            # git status without optional locks never refreshes (writes) the index, which a
            # command running meanwhile would see changed under it (git diff writes it).
            quiet = git_env({"GIT_OPTIONAL_LOCKS": "0"})
            status = run([*git, "-C", top, "status", "--porcelain=v1", "-z", "--no-renames",
                          "--untracked-files=no"], env=quiet)  # fmt: skip
            if status.returncode != 0:
                return cls(top, complete=False, head=operator_head)
            modified = [n[3:] for n in _names(status.stdout) if len(n) > 3]
        sources = [n for n in (*work, *dropped, *tracked) if os.path.basename(n) == ".gitignore"]
        rules = {n: d for n in (*sources, *_SOURCES) if (d := _digest(os.path.join(top, n)))}
        return cls(
            top,
            frozenset(work),
            ignored=frozenset(d.rstrip("/") for d in dropped),
            rules=rules,
            head=operator_head,
            modified=frozenset(modified),
        )

    @classmethod
    def _outside_git(cls, root: str) -> Baseline:
        """Every file of a workspace no repository holds; cut short past the limit."""
        files: list[str] = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in REGENERABLE]
            rel = os.path.relpath(top, root)
            files += [n if rel == "." else f"{rel}/{n}" for n in names]
            if len(files) > _MAX_BASELINE:
                return cls(None, complete=False, root=root)
        return cls(None, frozenset(files), root=root)

    def union(self, other: Baseline) -> Baseline:
        """The later baseline, never forgetting the work an earlier one had."""
        if other.top != self.top or other.root != self.root:
            return other
        return Baseline(
            other.top,
            self.work | other.work,
            self.complete and other.complete,
            ignored=other.ignored - self.work,
            rules=other.rules,
            head=other.head,
            modified=self.modified | other.modified,
            root=other.root,
        )

    def after(self, effects: Iterable[Effect], workspace: str) -> Baseline:
        """This baseline once a command's ``effects`` were applied without a question: where
        they removed or replaced work (the review found its content elsewhere, or it would
        have held them), whatever the command created is work too, at its new name."""
        base = self.top or self.root
        if base is None:
            return self
        effects = list(effects)

        def name(effect: Effect) -> str:
            return os.path.relpath(os.path.join(os.path.realpath(workspace), effect.path), base)

        lost = [name(e) for e in effects if e.kind in ("deleted", "replaced")]
        if not any(self.is_work(n) or n in self.modified for n in lost):
            return self
        made = {name(e) for e in effects if e.kind in ("created", "replaced")}
        made = {m for m in made if not m.startswith("..")}
        if not made:
            return self
        return Baseline(
            self.top,
            self.work | made,
            self.complete,
            ignored=self.ignored - made,
            rules=self.rules,
            head=self.head,
            modified=self.modified,
            root=self.root,
        )

    def holds_work(
        self, path: str
    ) -> Literal["untracked", "uncommitted", "unexamined", "not-in-git"] | None:
        """What overwriting the file at ``path`` (absolute) would lose of what the operator
        had: their untracked or uncommitted work, a file of a workspace in no repository
        (``not-in-git``; ``unexamined``: a baseline not taken whole, for any file there);
        None for a new file, one clean or ignored then, or one outside the workspace's
        repository (or, in none, outside the workspace)."""
        base = self.top or self.root
        if base is None:
            return None
        real = os.path.realpath(path)
        if not (real == base or real.startswith(base + os.sep)):
            return None
        if not os.path.lexists(real) or os.path.isdir(real):
            return None
        if not self.complete:
            return "unexamined"
        name = os.path.relpath(real, base)
        if self.top is None:
            return "not-in-git" if _had(name, self.work) else None
        if _had(name, self.work):
            return "untracked"
        if name in self.modified:
            return "uncommitted"
        return None

    def is_work(self, name: str) -> bool:
        """Whether ``name`` (relative to the top) is, or holds, the operator's untracked work."""
        prefix = name.rstrip("/") + "/"
        return name in self.work or any(w.startswith(prefix) for w in self.work)

    def rules_unchanged(self, name: str) -> bool:
        """Whether every ignore source that decides for ``name`` is as it was."""
        if self.top is None:
            return False
        if any(_digest(os.path.join(self.top, s)) != self.rules.get(s) for s in _SOURCES):
            return False
        parts = name.split("/")
        for depth in range(len(parts)):
            source = "/".join([*parts[:depth], ".gitignore"])
            if _digest(os.path.join(self.top, source)) != self.rules.get(source):
                return False
        return True

    def judged_ignored(self, name: str, ignored_now: bool) -> bool:
        """Whether ``name`` (relative to the top) counts as ignored against this baseline:
        ignored then, or ignored now by rules that are still the baseline's; never the
        operator's untracked work."""
        if not self.complete or self.top is None or self.is_work(name):
            return False
        if _inside(name, self.ignored):
            return True
        return ignored_now and self.rules_unchanged(name)
