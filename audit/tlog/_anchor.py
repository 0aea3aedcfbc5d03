"""Checkpoints kept outside the guard's home: an anchor directory.

Layout: ``<dir>/<logId>/<size as 12 digits>.checkpoint`` (the signed note, byte for byte)
and, beside it, ``<size>.tree`` (the frontier of the records before the checkpoint's last
one and where that one starts, so a later verify reads only what is new). Files are
created with ``O_EXCL`` and never rewritten: a second anchor of the same size must be
the same bytes. Nothing here is trusted on sight: a checkpoint counts only if its
signature verifies with the keyring, and a ``.tree`` file only if it leads to the
checkpoint's root (``verify_log`` checks that and otherwise reads the whole log).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit._errors import NoteError, ProofError, UsageError
from audit.tlog._note import MAX_NOTE_BYTES, ORIGIN_PREFIX, Checkpoint, open_checkpoint
from audit.tlog._tree import MAX_TREE_BYTES, TreeState

__all__ = ["AnchorDir", "Anchored"]

_NAME = re.compile(r"([0-9]{12})\.checkpoint")
_LOG_ID = re.compile(r"log_[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Anchored:
    """One anchored checkpoint that verified, with its tree state if one fits."""

    checkpoint: Checkpoint
    note: bytes
    state: TreeState | None
    path: Path


class AnchorDir:
    """An anchor directory; ``add`` writes, ``latest`` reads back what verifies."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _log_dir(self, origin: str) -> Path:
        log_id = origin.removeprefix(ORIGIN_PREFIX)
        if not origin.startswith(ORIGIN_PREFIX) or not _LOG_ID.fullmatch(log_id):
            raise UsageError("checkpoint origin", "is not an audit log's origin", origin)
        return self.path / log_id

    def add(
        self, note: bytes, checkpoint: Checkpoint, state: TreeState | None
    ) -> tuple[Path, bool]:
        """Keep ``note`` (already verified by the caller); ``(path, True)`` if it is new.

        An existing file of the same size with other bytes is a fork: raises
        :class:`audit.NoteError` (``anchor-conflict``) and writes nothing.
        """
        directory = self._log_dir(checkpoint.origin)
        directory.mkdir(parents=True, exist_ok=True, mode=0o755)
        target = directory / f"{checkpoint.size:012d}.checkpoint"
        created = _create(target, note)
        if not created and target.read_bytes() != note:
            raise NoteError(
                "anchor-conflict",
                f"{target.name} already holds another checkpoint of this size: a fork",
            )
        if state is not None and state.frontier.size + 1 == checkpoint.size:
            _create(target.with_suffix(".tree"), state.to_json())
        return target, created

    def latest(
        self, keys: Mapping[str, Ed25519PublicKey], origin: str
    ) -> tuple[Anchored | None, list[str]]:
        """The largest checkpoint of ``origin`` that verifies, and what was skipped and why."""
        problems: list[str] = []
        try:
            directory = self._log_dir(origin)
            names = sorted(
                (p for p in directory.iterdir() if _NAME.fullmatch(p.name)), reverse=True
            )
        except FileNotFoundError:
            return None, problems
        except OSError as exc:
            return None, [f"{self.path}: cannot read: {exc.strerror}"]
        for path in names:
            try:
                with path.open("rb") as handle:
                    note = handle.read(MAX_NOTE_BYTES + 1)
                opened = open_checkpoint(note, keys, origin=origin)
            except (OSError, NoteError) as exc:
                problems.append(f"{path.name}: {exc}")
                continue
            if int(path.name[:12]) != opened.checkpoint.size:
                problems.append(f"{path.name}: names size {opened.checkpoint.size}")
                continue
            return Anchored(opened.checkpoint, note, _state_beside(path), path), problems
        return None, problems


def _state_beside(path: Path) -> TreeState | None:
    try:
        with path.with_suffix(".tree").open("rb") as handle:
            return TreeState.from_json(handle.read(MAX_TREE_BYTES + 1))
    except (OSError, ProofError):
        return None


def _create(path: Path, content: bytes) -> bool:
    """Write ``content`` to a new file; ``False`` if the file already exists."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails rather than replace an existing anchor
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True
