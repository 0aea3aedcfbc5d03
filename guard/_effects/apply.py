"""Applying a layer's effects to the real workspace, so that a crash never leaves half of it.

Every step is one of three operations, each safe to run again (roll forward):

* ``remove`` a path of the workspace (done when it is gone);
* ``move`` a path of the upper layer onto the workspace with ``rename(2)``, which replaces a
  file or link atomically (done when the upper path is gone); across file systems it is
  copied to a temporary name beside the target first, then renamed;
* ``chmod`` a path of the workspace (the same result every time).

A ``replaced`` entry of another type is ``remove`` then ``move``: the one pair that is not
safe to run again as a whole, so the journal records when its ``remove`` is done. The
journal (``journal.jsonl`` in the layer, fsynced before the first step) lists the steps;
``committed`` is written when all are done. :func:`recover` finishes every journal a crash
left uncommitted, before any new command runs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from guard._effects.layer import link_above
from guard._effects.model import Effect
from guard._home import JOURNAL_FILE

__all__ = ["JOURNAL", "apply_effects", "recover", "remove_path"]

JOURNAL = JOURNAL_FILE
COMMITTED = "committed"


def remove_path(path: str) -> None:
    """Remove a file, link or whole directory; nothing when it is already gone."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _move(src: str, dst: str) -> None:
    if not os.path.lexists(src):
        return  # moved already (a step run again after a crash)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.replace(src, dst)
        return
    except OSError as exc:
        if exc.errno != 18:  # EXDEV: another file system
            raise
    temporary = os.path.join(os.path.dirname(dst), f".pi-guard-apply-{os.getpid()}")
    remove_path(temporary)
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, temporary, symlinks=True)
    else:
        shutil.copy2(src, temporary, follow_symlinks=False)
    os.replace(temporary, dst)
    remove_path(src)


def _steps(effects: Iterable[Effect]) -> list[dict[str, object]]:
    steps: list[dict[str, object]] = []
    for effect in effects:
        if effect.kind == "deleted":
            steps.append({"op": "remove", "path": effect.path})
        elif effect.kind == "mode-changed":
            steps.append({"op": "chmod", "path": effect.path, "mode": effect.mode})
        elif effect.kind == "replaced" and (effect.kind_of == "dir" or effect.was == "dir"):
            steps.append({"op": "remove", "path": effect.path, "then": "move"})
            steps.append({"op": "move", "path": effect.path})
        else:  # created, modified, or a file/link replaced by a file/link: one rename
            steps.append({"op": "move", "path": effect.path})
    return steps


def apply_effects(effects: Sequence[Effect], layer: Path, upper: Path, workspace: Path) -> int:
    """Apply ``effects`` (read from ``upper``) to ``workspace``; returns the steps run.

    The journal goes into ``layer`` first; :func:`recover` finishes it after a crash.
    """
    steps = _steps(effects)
    journal = layer / JOURNAL
    with journal.open("w", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"upper": str(upper), "workspace": str(workspace), "steps": steps}) + "\n"
        )
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_dir(str(layer))
    _run(journal, steps, set(), upper, workspace)
    return len(steps)


def _run(
    journal: Path, steps: Sequence[dict[str, object]], done: set[int], upper: Path, ws: Path
) -> None:
    with journal.open("a", encoding="utf-8") as marks:
        for index, step in enumerate(steps):
            path = str(step["path"])
            target = os.path.join(ws, path)
            if link_above(str(ws), path):
                continue  # the workspace changed since the review: never write through a link
            if step["op"] == "remove":
                if index in done:
                    continue
                remove_path(target)
                if step.get("then") == "move":
                    marks.write(f"done {index}\n")
                    marks.flush()
                    os.fsync(marks.fileno())
            elif step["op"] == "move":
                _move(os.path.join(upper, path), target)
            else:
                mode = step["mode"]
                assert isinstance(mode, int)
                if os.path.lexists(target) and not os.path.islink(target):
                    os.chmod(target, mode)
        marks.write(COMMITTED + "\n")
        marks.flush()
        os.fsync(marks.fileno())


def _dropped(path: Path, layers: Path) -> bool:
    """A path in a layer the review dropped (renamed with a leading dot: no layer id has
    one); it was applied whole or discarded before, so nothing of it is recovered."""
    return path.relative_to(layers).parts[0].startswith(".")


def recover(layers: Path) -> list[Path]:
    """Finish every journal under ``layers`` that a crash left uncommitted; returns them."""
    finished: list[Path] = []
    if not layers.is_dir():
        return finished
    journals = [*layers.glob(f"*/c*/{JOURNAL}"), *layers.glob(f"*/{JOURNAL}")]
    for journal in sorted(j for j in journals if not _dropped(j, layers)):
        lines = journal.read_text(encoding="utf-8").splitlines()
        if not lines or COMMITTED in lines[1:]:
            continue
        try:
            head = json.loads(lines[0])
        except ValueError:
            continue  # torn before the first step: nothing was applied
        done = {int(line.split()[1]) for line in lines[1:] if line.startswith("done ")}
        _run(journal, head["steps"], done, Path(head["upper"]), Path(head["workspace"]))
        finished.append(journal.parent)
    return finished
