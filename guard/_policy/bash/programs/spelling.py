"""A command's words in the full spelling the guard reads: long options abbreviated, short
options clustered and git's dashed programs, read as the program itself will.

git's parse-options and GNU ``getopt_long`` take any unambiguous prefix of a long option
(``git reset --ha`` is ``--hard``, ``chmod --recur`` is ``--recursive``); getopt splits a
cluster of short options (``mv -ft D`` is ``mv -f -t D``, ``wget -qOF`` is ``-q -O F``); and
``/usr/lib/git-core/git-reset`` is ``git reset``. ``full_spelling`` rewrites a command's
words once, before anything reads them, so the cards, the paths and the rules see only the
full spelling.

* **Prefixes.** A ``--word`` (or ``--word=value``) that is no long option the guard reacts to
  for that program (and git subcommand) but a prefix of one or more of them is read as each
  of them. Were it ambiguous the program would refuse it: reading it as every candidate is
  only stricter. Options the guard does not react to are left as they are.
* **Clusters.** For a program whose short options the guard knows, and which take a value,
  ``-abVx`` becomes ``-a -b -Vx``: the first letter that takes a value keeps the rest of the
  cluster (or the next word) as its value. A cluster with a letter the program does not take
  is refused by it, and read as it always was.
* **Values** of the options a card knows are skipped (a value may start with ``--``), and
  after ``--`` nothing is an option.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from guard._policy.bash.model import Word
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["GIT_SUBCOMMANDS", "full_spelling"]

_RECURSIVE = words("--recursive --no-preserve-root --dereference")

_LONG: Mapping[str, frozenset[str]] = {
    "rm": words("--recursive --force --dir --no-preserve-root --one-file-system"),
    "shred": words("--remove --zero --iterations --size --random-source --force"),
    "chmod": _RECURSIVE | words("--reference"),
    "chown": _RECURSIVE | words("--reference --from"),
    "chgrp": _RECURSIVE | words("--reference"),
    "sed": words("--in-place --expression --file --line-length --separate --sandbox"),
    "gsed": words("--in-place --expression --file --line-length --separate --sandbox"),
    "tar": words("""
        --to-command --use-compress-program --checkpoint-action --info-script
        --new-volume-script --file --directory --files-from --exclude-from --extract --get
        --create --overwrite --unlink-first --recursive-unlink --absolute-names
        """),
    "gtar": words("""
        --to-command --use-compress-program --checkpoint-action --info-script
        --new-volume-script --file --directory --files-from --exclude-from --extract --get
        --overwrite --unlink-first --recursive-unlink --absolute-names
        """),
    "wget": words("""
        --output-document --directory-prefix --execute --input-file --mirror --recursive
        --content-disposition --trust-server-names --config --output-file --append-output
        """),
    "make": words("--eval --file --makefile --include-dir --always-make"),
    "gmake": words("--eval --file --makefile --include-dir --always-make"),
    "awk": words("--source --file --exec --include --load --assign"),
    "gawk": words("--source --file --exec --include --load --assign"),
    "cp": words(
        "--target-directory --recursive --symbolic-link --link --force --remove-destination"
    ),
    "mv": words("--target-directory --force --no-target-directory"),
    "ln": words("--target-directory --symbolic --force"),
    "install": words("--target-directory --mode --owner --group"),
    "rsync": words("""
        --delete --delete-before --delete-during --delete-delay --delete-after
        --delete-excluded --remove-source-files --rsh --rsync-path
        """),
    "truncate": words("--size --reference"),
    "find": frozenset(),
}
"""Per program that takes prefixes of its long options: the long options the guard reacts
to (the rules' flags, what the cards read); the card's own are added below."""

_GIT_ANY = words("--template --config")
_GIT: Mapping[str, frozenset[str]] = {
    "reset": words("--hard --merge --keep"),
    "clean": words("--force"),
    "push": words("--force --force-with-lease --force-if-includes --mirror --delete --prune"),
    "branch": words("--delete --force --move --copy"),
    "checkout": words("--force --discard-changes"),
    "switch": words("--force --discard-changes"),
    "restore": words("--worktree"),
    "gc": words("--prune --aggressive"),
    "worktree": words("--force"),
    "update-ref": words("--stdin"),
    "reflog": words("--expire --expire-unreachable --all"),
    "stash": frozenset(),
}
"""git's long options the guard reacts to, per subcommand (and ``_GIT_ANY``); the options
that run a program are the git card's, which reads their abbreviations itself. Options
that make a command safer (``git restore --staged``, ``git rm --cached``) are left out: an
abbreviation of one is read as if absent, which asks."""

GIT_SUBCOMMANDS = words("""
    add am annotate apply archive bisect blame branch bundle cat-file check-ignore checkout
    checkout-index cherry cherry-pick clean clone commit commit-tree config count-objects
    describe diff diff-files diff-index diff-tree difftool fast-export fast-import fetch
    filter-branch for-each-ref format-patch fsck gc grep hash-object help init instaweb log
    ls-files ls-remote ls-tree merge merge-base mergetool mv notes prune pull push range-diff
    read-tree rebase reflog remote repack replace request-pull reset restore rev-list
    rev-parse revert rm send-email shortlog show show-ref sparse-checkout stash status
    submodule switch symbolic-ref tag update-index update-ref upload-pack receive-pack
    var verify-commit whatchanged worktree write-tree
    """)
"""git's commands, which also run as a program of their own (``git-reset``)."""

_GIT_GLOBAL_VALUES = words("-C -c --git-dir --work-tree --namespace --super-prefix --config-env")
_CLUSTER_EXTRA: Mapping[str, str] = {"wget": "oaeiBtOTwQPUlARDIXn"}
"""Short options taking a value, for programs whose card does not say them."""
_SHORT: Mapping[str, str] = {
    "mv": "bfinStTuvZ",
    "cp": "abdfHilLnPprRsStTuvxZ",
    "ln": "bdfFinLPrsStTv",
    "install": "bcCdDgmopsStTvZ",
    "wget": "VhbeoaqvdnNwiFBtOcSTwQPUlARDIXHrpkKmLxE46",
}
"""The short options of the programs whose clusters are split: a cluster with a letter the
program does not take is refused by it, and read as it always was."""


def _card_long(card: Card) -> frozenset[str]:
    found: set[str] = set(card.code_options) | set(card.catastrophic_flags)
    found |= set(card.creates_links or ())
    shape = card.paths
    while shape is not None:
        found |= set(shape.recursive) | set(shape.only_with)
        shape = shape.otherwise
    return frozenset(n for n in found if n.startswith("--") and len(n) > 3)


def _value_options(shape: Shape | None) -> tuple[str, frozenset[str]]:
    short, long = "", frozenset[str]()
    while shape is not None:
        short, long = short + shape.short_values, long | shape.long_values
        shape = shape.otherwise
    return short, long


def _long_names(word: str, known: frozenset[str]) -> list[str] | None:
    """The long options ``word`` (``--name`` or ``--name=value``) spells; ``None``: as is."""
    name, eq, value = word.partition("=")
    if name in known or len(name) < 3:
        return None
    full = sorted(k for k in known if k.startswith(name))
    return [k + eq + value for k in full] or None


def _rewrite(
    args: Sequence[Word],
    known: frozenset[str],
    short_values: str = "",
    long_values: frozenset[str] = frozenset(),
    flags: str = "",
) -> list[Word]:
    out: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value is None or value[:1] != "-" or value == "-":
            out.append(word)
            continue
        if value == "--":
            out.extend(args[i - 1 :])
            break
        if value.startswith("--"):
            names = _long_names(value, known) or [value]
            out += [Word(n, n) if n != value else word for n in names]
            if "=" not in value and any(n in long_values for n in names) and i < len(args):
                out.append(args[i])
                i += 1
            continue
        letters = value[1:]
        cut = next((j for j, c in enumerate(letters) if c in short_values), None)
        if cut is None or len(letters) < 2 or any(c not in flags for c in letters[: cut + 1]):
            out.append(word)
            if cut == len(letters) - 1 and i < len(args):  # its value, even one like ``--x``
                out.append(args[i])
                i += 1
            continue
        for j, ch in enumerate(letters):
            if ch not in short_values:
                out.append(Word("-" + ch, "-" + ch))
                continue
            rest = letters[j + 1 :]
            out.append(Word("-" + ch + rest, "-" + ch + rest) if rest else Word("-" + ch, "-" + ch))
            if not rest and i < len(args):
                out.append(args[i])
                i += 1
            break
    return out


def _git(args: Sequence[Word], git_card: Card | None) -> list[Word]:
    globals_ = _GIT_GLOBAL_VALUES | (git_card.global_options if git_card else frozenset())
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or value[:1] != "-" or value == "-":
            break
        if value == "--":
            return list(args)
        i += 2 if value in globals_ else 1
    if i >= len(args) or args[i].value is None:
        return list(args)
    known = _GIT.get(args[i].value or "", frozenset()) | _GIT_ANY
    return [*args[: i + 1], *_rewrite(args[i + 1 :], known)]


def _dashed_git(argv: Sequence[Word]) -> list[Word] | None:
    """``/usr/lib/git-core/git-reset …`` or ``git-reset …`` as ``git reset …``."""
    value = argv[0].value
    if value is None:
        return None
    base = posixpath.basename(value)
    name = base[4:]
    if not base.startswith("git-") or not name:
        return None
    if name not in GIT_SUBCOMMANDS and not posixpath.dirname(value).endswith("/git-core"):
        return None
    return [Word("git", argv[0].raw), Word(name, name), *argv[1:]]


def full_spelling(argv: Sequence[Word], cards: Mapping[str, Card]) -> list[Word]:
    """``argv`` with its options in the full spelling (see the module docstring)."""
    if not argv or argv[0].value is None:
        return list(argv)
    argv = _dashed_git(argv) or list(argv)
    if argv[0].value is None:
        return argv
    program = posixpath.basename(argv[0].value.rstrip("/"))
    card = cards.get(program)
    if program == "git":
        return [argv[0], *_git(argv[1:], card)]
    if card is None and program not in _LONG:
        return list(argv)
    known = _LONG.get(program, frozenset()) | (_card_long(card) if card else frozenset())
    short_values, long_values = _value_options(card.paths if card else None)
    short_values += _CLUSTER_EXTRA.get(program, "")
    flags = _SHORT.get(program, "")
    return [argv[0], *_rewrite(argv[1:], known, short_values, long_values, flags)]
