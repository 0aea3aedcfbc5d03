"""rm and its family: the programs that delete or overwrite what they name.

``rm``, ``unlink``, ``srm``, ``rmdir``, ``del`` delete their operands (recursively with
``-r``/``-R``/``--recursive``); ``truncate`` and ``shred`` overwrite theirs (their options
that take a value are not operands); ``rimraf``, ``trash`` and ``trash-put`` delete
recursively whatever the flags. None of them runs anything. ``DELETERS`` names them all for
the programs that run one (``find -exec rm``).
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["DELETERS", "RM", "SHRED", "SRM", "TRASH", "TRUNCATE", "UNLINK"]


DELETERS = words("rm unlink shred srm rmdir trash trash-put rimraf truncate del")
"""Programs that delete or overwrite their operands."""

_DELETED = Use(read=False, write=True, target=True)
_RECURSIVE = ("-r", "-R", "--recursive")

_REMOVED = Shape(operands=_DELETED, recursive=_RECURSIVE)

RM = Card(
    names=words("rm"),
    paths=_REMOVED,
    catastrophic=True,
    catastrophic_flags=("--no-preserve-root",),
    long_options=words("--force --dir --one-file-system"),
    abbreviates=True,
    short_options="fiIrRdv",
)
"""``rm``: every operand deleted; ``--no-preserve-root`` is a deletion of ``/``."""

SRM = Card(names=words("srm"), paths=_REMOVED, catastrophic=True)
"""``srm``: every operand deleted (overwritten first)."""

UNLINK = Card(names=words("unlink rmdir del"), paths=_REMOVED)
"""``unlink``, ``rmdir``, ``del``: every operand deleted, never a whole tree."""

TRUNCATE = Card(
    names=words("truncate"),
    paths=Shape(
        short_values="sr",
        long_values=words("--size --reference"),
        operands=_DELETED,
        recursive=_RECURSIVE,
    ),
    long_options=words("--size --reference"),
    abbreviates=True,
    short_options="cor:s:",
)
"""``truncate``: every operand overwritten (``-s SIZE``, ``-r FILE`` are no operands)."""

SHRED = Card(
    names=words("shred"),
    paths=Shape(
        short_values="nsu",
        long_values=words("--iterations --size --random-source"),
        operands=_DELETED,
        recursive=_RECURSIVE,
    ),
    catastrophic=True,
    long_options=words("--remove --zero --iterations --size --random-source --force"),
    abbreviates=True,
    short_options="fn:s:uvxz",
)
"""``shred``: every operand overwritten."""

TRASH = Card(
    names=words("rimraf trash trash-put"),
    paths=Shape(operands=_DELETED, always_recursive=True),
    catastrophic=True,
)
"""``rimraf``, ``trash``: every operand deleted, always recursively."""
