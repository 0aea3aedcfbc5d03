"""One command's layer, from its end to the workspace: read, judge, apply or hold, resolve.

:class:`Reviewer` works on ``<home>/layers/<id>``. :meth:`Reviewer.review` reads what the
command did, applies at once everything that loses nothing, and keeps the rest in the layer
(``held.json``) for the operator; :meth:`Reviewer.resolve` applies or discards what was
held. A layer is removed once nothing of it waits. Auditing and evidence are the facade's
(:class:`guard.Guard`): this module only touches the layer and the workspace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from audit.wire import canonical_json, sha256_prefixed
from guard._effects.apply import apply_effects, recover
from guard._effects.judge import REGENERABLE, Baseline, judge
from guard._effects.layer import changed_since, layer_made, read_effects
from guard._effects.model import Effect, Hold, Review
from guard._effects.repository import steers_git
from guard._errors import BadInputError
from guard._home import HELD_FILE, JOURNAL_FILE
from guard._policy import git_config_names_programs, within

__all__ = ["LAYER_ID", "Reviewer", "effects_digest", "size_text", "summary_line"]

LAYER_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


def effects_digest(effects: Sequence[Effect]) -> str:
    """``sha256:`` over the RFC 8785 canonical JSON of the effect list."""
    return sha256_prefixed(canonical_json([e.model_dump(mode="json") for e in effects]))


def size_text(n: int) -> str:
    """``12 B``, ``4.0 KiB``, ``14.2 MiB``: a size for people."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def summary_line(held: Sequence[Hold]) -> str:
    """ "3 deletions (12 files, 4.0 KiB), 1 overwrite (1 file, 20 B)" for what was held:
    each kind of change under its own name (a creation is never called a deletion)."""
    by_label: dict[str, list[Hold]] = {}
    for hold in held:
        by_label.setdefault(_LABELS[hold.effect.kind], []).append(hold)
    parts = []
    for label in ("deletion", "overwrite", "creation", "mode change"):
        items = by_label.get(label, [])
        if items:
            files = sum(h.files for h in items)
            size = sum(h.bytes for h in items)
            plural = "s" if len(items) != 1 else ""
            noun = "file" if files == 1 else "files"
            parts.append(f"{len(items)} {label}{plural} ({files} {noun}, {size_text(size)})")
    return ", ".join(parts)


_LABELS = {
    "deleted": "deletion",
    "modified": "overwrite",
    "replaced": "overwrite",
    "created": "creation",
    "mode-changed": "mode change",
}


class Reviewer:
    """The layers of one guard home (``<home>/layers``)."""

    def __init__(self, layers: Path) -> None:
        self.layers = layers

    def recover(self) -> list[Path]:
        """Finish what a crash left half applied (before any new command's layer)."""
        return recover(self.layers)

    def _layer(self, layer_id: str) -> Path:
        if not LAYER_ID.fullmatch(layer_id):  # fullmatch: '$' also matches before a final LF
            raise BadInputError("layer", "is not a layer id", layer_id)
        return self.layers / layer_id

    def review(
        self,
        layer_id: str,
        workspace: str,
        *,
        protected: Callable[[str], bool],
        blocked: Callable[[str], bool] | None = None,
        approved: Sequence[str] = (),
        answered: bool = False,
        baseline: Baseline | None = None,
        mount_points: Sequence[str] = (),
        caches: Sequence[str] = (),
    ) -> Review:
        """Read the layer's effects, apply what loses nothing, keep what is held.

        ``blocked``: whether a write of a path is blocked (not only asked); inside a
        regenerable directory the command itself created (``python3 -m venv .venv``,
        ``npm install``), only that holds: a CA bundle or a package's test key is not the
        operator's, and nothing was there to lose (default: ``protected``).

        ``caches``: the project's package cache stores, in the order the sandbox mounted
        them; what the command wrote into each goes into its store, unjudged (it is the
        project's private copy; the user's own cache never changes).
        """
        layer = self._layer(layer_id)
        upper = layer / "upper"
        if not upper.is_dir():
            # Every command makes its layer before it runs: none means it never ran here,
            # or ran with another sidecar's plan; either way nothing can be applied.
            raise BadInputError("layer", "not found: nothing of this command was applied", layer_id)
        since = layer_made(layer)  # before anything is written into the layer
        self._keep_caches(layer, caches)
        made = {os.path.relpath(m, workspace) for m in mount_points if within(m, workspace)}
        effects = [
            e
            for e in read_effects(upper, workspace)
            if not (e.path in made and e.kind == "created" and e.kind_of == "dir" and not e.files)
        ]
        if not effects:
            self.drop(layer_id)
            return Review(decision="empty", summary="no change to the workspace")
        # A file that steers git (alternates, info/attributes, a hook …) is protected as pi's
        # write tool asks about it, though a script writes git's bookkeeping unjudged.

        def guarded(path: str) -> bool:
            return protected(path) or steers_git(os.path.relpath(path, workspace), workspace)

        # A new directory is one effect: it is protected when anything made in it would be
        # (in a new regenerable one, when anything made in it would be blocked).
        strict = blocked or protected
        inside_new = {
            e.path
            for e in effects
            if e.kind in ("created", "replaced") and e.kind_of == "dir"
            and _any_protected(
                upper / e.path,
                Path(workspace) / e.path,
                strict if _fresh_regenerable(e) else guarded,
            )
        }  # fmt: skip
        held = judge(
            effects,
            workspace,
            protected=lambda p: guarded(p) or os.path.relpath(p, workspace) in inside_new,
            approved=approved,
            upper=str(upper),
            answered=answered,
            baseline=baseline,
            since=since,
        )
        held_paths = {h.effect.path for h in held}
        now = [e for e in effects if e.path not in held_paths and not _under(e.path, held_paths)]
        apply_effects(now, layer, upper, Path(workspace))
        digest = effects_digest(effects)
        if not held:
            self.drop(layer_id)
            return Review(decision="applied", effects=tuple(effects), digest=digest,
                          summary=f"{len(effects)} change(s) applied")  # fmt: skip
        (layer / HELD_FILE).write_text(
            json.dumps(
                {
                    "workspace": workspace,
                    "since": since,
                    "held": [h.model_dump(mode="json") for h in held],
                }
            ),
            encoding="utf-8",
        )
        return Review(
            decision="held",
            effects=tuple(effects),
            held=tuple(held),
            digest=digest,
            summary=f"held: {summary_line(held)}",
        )

    @staticmethod
    def _keep_caches(layer: Path, caches: Sequence[str]) -> None:
        for index, store in enumerate(caches):
            cache_upper = layer / f"c{index}" / "upper"
            if not cache_upper.is_dir():
                continue
            effects = read_effects(cache_upper, store)
            if effects:
                apply_effects(effects, layer / f"c{index}", cache_upper, Path(store))

    def pending(self, layer_id: str) -> Review:
        """What :meth:`review` held in this layer (refused when it holds nothing)."""
        _, held, _ = self._held(layer_id)
        effects = [h.effect for h in held]
        return Review(
            decision="held",
            effects=tuple(effects),
            held=tuple(held),
            digest=effects_digest(effects),
            summary=summary_line(held),
        )

    def _held(self, layer_id: str) -> tuple[str, list[Hold], int | None]:
        layer = self._layer(layer_id)
        try:
            saved = json.loads((layer / HELD_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise BadInputError("layer", "holds nothing to resolve", layer_id) from None
        since = saved.get("since")
        held = [Hold.model_validate(h) for h in saved["held"]]
        return str(saved["workspace"]), held, since if isinstance(since, int) else None

    def resolve(self, layer_id: str, *, apply: bool) -> Review:
        """Apply or discard what :meth:`review` held; the layer is gone afterwards."""
        layer = self._layer(layer_id)
        workspace, held, since = self._held(layer_id)
        skipped: list[Hold] = []
        if apply:
            (layer / JOURNAL_FILE).unlink(missing_ok=True)
            # Never through a link, never over what changed since the command started (a
            # parallel call may have moved work into a held deletion while the operator read).
            skipped = [
                h
                for h in held
                if h.reason == "conflict"
                or changed_since(os.path.join(workspace, h.effect.path), since or 0)
            ]
            safe = [h.effect for h in held if h not in skipped]
            apply_effects(safe, layer, layer / "upper", Path(workspace))
        self.drop(layer_id)
        return Review(
            decision="applied" if apply else "discarded",
            effects=tuple(h.effect for h in held),
            held=tuple(held),
            digest=effects_digest([h.effect for h in held]),
            summary=("applied" if apply else "discarded") + f": {summary_line(held)}",
            skipped=tuple(skipped),
        )

    def held(self) -> list[str]:
        """Ids of layers that hold effects waiting for the operator."""
        if not self.layers.is_dir():
            return []
        names = (p.parent.name for p in self.layers.glob(f"*/{HELD_FILE}"))
        return sorted(n for n in names if LAYER_ID.fullmatch(n))  # not a dropped one

    def drop(self, layer_id: str) -> None:
        """Remove a layer (what it still holds is discarded).

        It leaves the layers' names at once (renamed to a name with a leading dot, which no
        layer id has: no review, recovery or list of held layers sees it again) and is
        removed on a thread of its own: the reply to a command does not wait for the fifty
        or so directories of an empty layer (about 8 ms here). What a crash leaves of it goes
        with its sidecar's directory."""
        path = self._layer(layer_id)
        gone = self.layers / f".gone-{layer_id}"
        try:
            os.rename(path, gone)
        except OSError:
            shutil.rmtree(path, ignore_errors=True)
            return
        threading.Thread(
            target=shutil.rmtree, args=(gone,), kwargs={"ignore_errors": True}, daemon=True
        ).start()


def _under(path: str, parents: set[str]) -> bool:
    return any(path.startswith(p + "/") for p in parents)


def _inert_git_file(source: str, rel: str) -> bool:
    """A file of a repository the command made that runs nothing: a sample hook (git's
    template), the hooks directory itself, a ``config`` that names no program. A new
    repository with a live hook or such a config is held: the operator's next git command
    would run it (githooks(5))."""
    parts = rel.split("/")
    if ".git" not in parts:
        return False
    tail = parts[parts.index(".git") + 1 :]
    if tail and tail[-1].endswith(".sample") and "hooks" in tail:
        return True
    if tail in (["hooks"], []) or (os.path.isdir(source) and not os.path.islink(source)):
        return True
    if tail and tail[-1] in ("config", "config.worktree") and not os.path.islink(source):
        return not git_config_names_programs(Path(source))
    return False


def _fresh_regenerable(effect: Effect) -> bool:
    """A directory the command created where nothing was, named as a regenerable place."""
    return (
        effect.kind == "created"
        and effect.was == "none"
        and bool(REGENERABLE.intersection(effect.path.split("/")))
    )


def _any_protected(made: Path, there: Path, protected: Callable[[str], bool]) -> bool:
    """Whether a path under the new directory ``made`` would be protected at ``there``."""
    for root, dirs, names in os.walk(made):
        for name in [*names, *dirs]:
            source = os.path.join(root, name)
            rel = os.path.relpath(source, made)
            if _inert_git_file(source, f"{there.name}/{rel}"):
                continue
            if protected(os.path.join(there, rel)):
                return True
    return False
