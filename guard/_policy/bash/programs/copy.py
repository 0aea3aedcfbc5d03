"""mv, cp and their family: what they read, and the destination they write.

The operands are the sources, the last operand (or the value of ``-t``/
``--target-directory``) the destination. ``mv`` changes its sources and its destination;
``cp``, ``install``, ``scp``, ``ditto``, ``gcp`` read the sources and write the
destination, recursively with ``-r``/``-R``/``-a``; ``ln`` writes both (a link replaces a
file of that name); ``rsync`` always copies recursively. ``mv`` and ``cp`` write, beneath a
directory destination, only what each source becomes there. ``rsync -e``/``--rsh``/
``--rsync-path`` and ``scp -S``/``-o``/``-F`` run a program of the command's choosing.
"""

from __future__ import annotations

from dataclasses import replace

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["CP", "DITTO", "INSTALL", "LINK", "LN", "MV", "RSYNC", "SCP"]


_READ = Use(read=True, write=False)
_COPIER = Shape(
    operands=_READ,
    destination=Use(read=False, write=True, target=True),
    recursive=("-r", "-R", "-a", "--recursive", "--archive"),
)
_TARGET = words("--target-directory --suffix")

MV = Card(
    names=words("mv"),
    paths=Shape(
        short_values="tS",
        long_values=_TARGET,
        operands=Use(read=True, write=True, target=True),
        destination=Use(read=True, write=True, target=True),
        always_recursive=True,
        splits_destination=True,
    ),
    catastrophic=True,
    long_options=words("--target-directory --force --no-target-directory"),
    abbreviates=True,
    short_options="bfinS:t:TuvZ",
)
"""``mv``: sources and destination changed."""

CP = Card(
    names=words("cp"),
    paths=replace(_COPIER, short_values="tS", long_values=_TARGET, splits_destination=True),
    creates_links=("-s", "-l", "--symbolic-link", "--link"),
    long_options=words(
        "--target-directory --recursive --symbolic-link --link --force --remove-destination"
    ),
    abbreviates=True,
    short_options="abdfHilLnPprRsS:t:TuvxZ",
)
"""``cp``: sources read, the destination written."""

LN = Card(
    names=words("ln"),
    paths=replace(
        _COPIER, short_values="tS", long_values=_TARGET, operands=Use(read=True, write=True)
    ),
    creates_links=(),
    long_options=words("--target-directory --symbolic --force"),
    abbreviates=True,
    short_options="bdfFinLPrsS:t:Tv",
)
"""``ln``: the link's target and the link both written."""

INSTALL = Card(
    names=words("install"),
    paths=replace(
        _COPIER,
        short_values="gmotS",
        long_values=words("--group --mode --owner --target-directory --suffix"),
    ),
    long_options=words("--target-directory --mode --owner --group"),
    abbreviates=True,
    short_options="bcCdDg:m:o:psS:t:TvZ",
)
"""``install``: sources read, the destination written."""

RSYNC = Card(
    names=words("rsync"),
    paths=replace(
        _COPIER,
        short_values="eBfT",
        long_values=words("""
        --rsh --filter --exclude --include --temp-dir --exclude-from --include-from --files-from
        --backup-dir --suffix --chmod --log-file --partial-dir --compare-dest --copy-dest
        --link-dest
    """),
        always_recursive=True,
    ),
    code_options=words("-e --rsh --rsync-path"),
    long_options=words("""
        --delete --delete-before --delete-during --delete-delay --delete-after
        --delete-excluded --remove-source-files --rsh --rsync-path
        """),
    abbreviates=True,
)
"""``rsync``: sources read, the destination written whole, always recursively."""

SCP = Card(
    names=words("scp"),
    paths=replace(_COPIER, short_values="cFiJloPS"),
    code_options=words("-S -o -F"),
)
"""``scp``: sources read, the destination written."""

DITTO = Card(names=words("ditto gcp"), paths=_COPIER)
"""``ditto``, ``gcp``: sources read, the destination written."""

LINK = Card(names=words("link"), creates_links=())
"""``link``: makes a hard link; its paths are not known."""
