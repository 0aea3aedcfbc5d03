"""tar, zip and the programs that unpack: the archive, its members, and what it writes.

* **Paths.** ``tar``/``zip``: the archive (``-f FILE``, tar's old-style ``tar cf FILE``,
  zip's first operand) is written when creating and read otherwise; ``-C DIR`` is written
  when extracting; the members are read, recursively.
* **Runs.** Extracting (``tar -x``/``xf``/``--extract``, ``unzip`` but for a listing or a
  test, ``7z x``/``e``, ``cpio -i``, ``ar x``) and ``patch`` without ``--dry-run`` write
  files whose names are inside the archive or patch, not in the command: that asks.
  ``zip -T``/``-TT``/``--unzip-command`` run a program.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import has_flag, option_value
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words

__all__ = ["EXTRACTORS", "GTAR", "TAR", "ZIP"]

_TAR_LONG = words("""
    --to-command --use-compress-program --checkpoint-action --info-script --new-volume-script
    --file --directory --files-from --exclude-from --extract --get --create --overwrite
    --unlink-first --recursive-unlink --absolute-names
    """)
"""The long options of tar the guard reacts to."""
_TAR_SHORT = "Acdrtuxg:GnSC:T:X:kUWOmpsf:F:L:Mb:BiH:V:aI:jJzZhK:N:PlRvwo"
"""tar's short options (tar --help); its old-style first word (``tar czf``) is no cluster."""


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], positionals: Sequence[Word]
) -> Touches:
    """tar/zip: the archive (written when creating), members read, ``-C DIR`` the other way."""
    program, args = command.program, command.args
    old_style = program == "tar" and bool(positionals) and positionals[0] is args[0]
    first = (args[0].value or "") if args else ""
    creating = program == "zip" or has_flag(flags, "-c", "--create") or (old_style and "c" in first)
    if program == "zip":
        archives = list(positionals[:1])
    elif old_style and "f" in first:
        archives = list(positionals[1:2])
    else:
        archives = option_value(args, "-f", "--file")
    out: Touches = [
        (word, Use(read=not creating, write=creating, target=creating)) for word in archives
    ]
    out += [
        (word, Use(read=creating, write=not creating, target=not creating, recursive=True))
        for word in option_value(args, "-C", "--directory")
    ]
    # the old-style first word, and the archive it names (``tar cf FILE``; not one of ``-f``)
    named = len(archives) if old_style and "f" in first else 0
    skip = 1 if program == "zip" else (1 + named if old_style else 0)
    members = [w for w in positionals[skip:] if w not in archives]
    out += [(word, Use(read=True, write=False, recursive=True)) for word in members]
    return out


def _runs(w: SyntaxWalker, command: Command) -> None:
    program = command.program or ""
    args = command.args
    values = [a.value or "" for a in args]
    first = values[0] if values else ""
    if program in ("tar", "gtar", "bsdtar"):
        old_style = bool(first) and not first.startswith("-") and "x" in first
        extract = old_style or any(
            v in ("--extract", "--get")
            or (v.startswith("-") and not v.startswith("--") and "x" in v[1:])
            for v in values
        )
    elif program == "unzip":
        extract = not any(v in ("-l", "-t", "-v", "-Z", "-p", "-c", "-z") for v in values)
    elif program in ("7z", "7za", "7zr"):
        extract = first in ("x", "e")
    elif program == "cpio":
        extract = any(
            v in ("-i", "--extract")
            or (v.startswith("-") and "i" in v[1:] and not v.startswith("--"))
            for v in values
        )
    elif program == "ar":
        extract = "x" in first
    else:  # patch
        extract = "--dry-run" not in values
    if extract:
        w.finding("opaque-write", f"{program} writes files named inside the archive or patch")


TAR = Card(
    names=words("tar"),
    paths=Shape(
        short_values="fCbTXIH",
        long_values=words("""
        --file --directory --exclude --files-from --exclude-from --use-compress-program --format
    """),
        reader=_paths,
    ),
    runs=_runs,
    long_options=_TAR_LONG,
    abbreviates=True,
    short_options=_TAR_SHORT,
)
"""tar's card."""

ZIP = Card(
    names=words("zip"),
    paths=Shape(short_values="xibn", reader=_paths),
    code_options=words("-T --test -TT --unzip-command"),
)
"""zip's card."""

GTAR = Card(
    names=words("gtar"),
    runs=_runs,
    long_options=_TAR_LONG,
    abbreviates=True,
    short_options=_TAR_SHORT,
)
"""GNU tar by its other name: what it unpacks asks, its paths are not known."""

EXTRACTORS = Card(names=words("bsdtar unzip 7z 7za 7zr cpio ar patch"), runs=_runs)
"""The other programs that unpack (and ``patch``): what they write is not in the command."""
