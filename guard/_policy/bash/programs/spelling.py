"""A command's words in the full spelling the guard reads: long options abbreviated, short
options clustered and git's dashed programs, read as the program itself will.

git's parse-options and GNU ``getopt_long`` take any unambiguous prefix of a long option
(``git reset --ha`` is ``--hard``, ``chmod --recur`` is ``--recursive``); getopt splits a
cluster of short options (``mv -ft D`` is ``mv -f -t D``, ``wget -qOF`` is ``-q -O F``); and
``/usr/lib/git-core/git-reset`` is ``git reset``. ``full_spelling`` rewrites a command's
words once, before anything reads them, so the cards, the paths and the rules see only the
full spelling. This module is only the mechanism: what it knows of a program is the
program's card (``long_options``, ``short_options``, ``subcommand_options``,
``subcommands``, and the options its other fields name).

* **Prefixes.** A ``--word`` (or ``--word=value``) that is no long option the card reacts
  to (for git, with its subcommand's) but a prefix of one or more of them is read as each
  of them. Were it ambiguous the program would refuse it: reading it as every candidate is
  only stricter. Options the guard does not react to are left as they are.
* **Clusters.** For a program whose card gives its short options, a cluster holding a
  letter that takes a value is split: ``-abVx`` becomes ``-a -b -Vx``, the first such
  letter keeping the rest of the cluster (or the next word) as its value (``tar -czf F`` is
  ``tar -c -z -f F``). A cluster of flags alone (``rm -rf``) stays one word: every reader
  takes its letters one by one. A cluster with a letter the program does not take is
  refused by it, and read as it always was.
* **Values** of the options a card knows are skipped (a value may start with ``--``), and
  after ``--`` nothing is an option.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from guard._policy.bash.model import Word
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card

__all__ = ["abbreviates", "full_spelling"]


def _card_long(card: Card) -> frozenset[str]:
    found: set[str] = set(card.long_options) | set(card.code_options)
    found |= set(card.catastrophic_flags)
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


def abbreviates(word: str, option: str) -> bool:
    """Whether ``word`` is the long ``option`` abbreviated (``--forc`` of ``--force``,
    ``--net=host`` of ``--network=host``; ``--forc=x`` of ``--force``), not spelled in full."""
    name, eq, value = word.partition("=")
    full, option_eq, option_value = option.partition("=")
    if len(name) < 3 or name[:2] != "--" or name == full or not full.startswith(name):
        return False
    return not option_eq or (eq, value) == (option_eq, option_value)


def _long_names(word: str, known: frozenset[str]) -> list[str] | None:
    """The long options ``word`` (``--name`` or ``--name=value``) spells; ``None``: as is."""
    name, eq, value = word.partition("=")
    if name in known:
        return None
    full = sorted(k for k in known if abbreviates(name, k))
    return [k + eq + value for k in full] or None


def _rewrite(
    args: Sequence[Word],
    known: frozenset[str],
    short_values: str = "",
    long_values: frozenset[str] = frozenset(),
    flags: str = "",
    optional: str = "",
) -> list[Word]:
    """``args`` respelled: ``known`` long options in full, a cluster of ``flags`` split
    (``short_values`` take the rest or the next word, ``optional`` only the rest)."""
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
        takes = short_values + optional
        cut = next((j for j, c in enumerate(letters) if c in takes), None)
        if cut is None or len(letters) < 2 or any(c not in flags for c in letters[: cut + 1]):
            out.append(word)
            if cut == len(letters) - 1 and letters[-1] in short_values and i < len(args):
                out.append(args[i])  # its value, even one like ``--x``
                i += 1
            continue
        for j, ch in enumerate(letters):
            if ch not in takes:
                out.append(Word("-" + ch, "-" + ch))
                continue
            rest = letters[j + 1 :]
            out.append(Word("-" + ch + rest, "-" + ch + rest) if rest else Word("-" + ch, "-" + ch))
            if not rest and ch in short_values and i < len(args):
                out.append(args[i])
                i += 1
            break
    return out


def _getopt(optstring: str) -> tuple[str, str, str]:
    """(every letter, the letters taking a value, those taking only an attached one) of a
    getopt string (``ab:c::``)."""
    letters = "".join(c for c in optstring if c != ":")
    marks = [(c, optstring[i + 1 : i + 3]) for i, c in enumerate(optstring) if c != ":"]
    values = "".join(c for c, after in marks if after[:1] == ":" and after != "::")
    optional = "".join(c for c, after in marks if after == "::")
    return letters, values, optional


def _after_subcommand(args: Sequence[Word], card: Card) -> list[Word]:
    """The words after the card's global options and subcommand respelled (``git -C d reset
    --ha``); those before it stay as typed."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or value[:1] != "-" or value == "-":
            break
        if value == "--":
            return list(args)
        i += 2 if value in card.global_options else 1
    if i >= len(args) or args[i].value is None:
        return list(args)
    known = _card_long(card) | card.subcommand_options.get(args[i].value or "", frozenset())
    return [*args[: i + 1], *_rewrite(args[i + 1 :], known)]


def _dashed(argv: Sequence[Word], cards: Mapping[str, Card]) -> list[Word] | None:
    """``/usr/lib/git-core/git-reset …`` or ``git-reset …`` as ``git reset …``."""
    value = argv[0].value
    git = cards.get("git")
    if value is None or git is None:
        return None
    base = posixpath.basename(value)
    name = base[4:]
    if not base.startswith("git-") or not name:
        return None
    if name not in git.subcommands and not posixpath.dirname(value).endswith("/git-core"):
        return None
    return [Word("git", argv[0].raw), Word(name, name), *argv[1:]]


def full_spelling(argv: Sequence[Word], cards: Mapping[str, Card]) -> list[Word]:
    """``argv`` with its options in the full spelling (see the module docstring)."""
    if not argv or argv[0].value is None:
        return list(argv)
    argv = _dashed(argv, cards) or list(argv)
    if argv[0].value is None:
        return argv
    card = cards.get(posixpath.basename(argv[0].value.rstrip("/")))
    if card is None:
        return list(argv)
    if card.subcommand_options:
        return [argv[0], *_after_subcommand(argv[1:], card)]
    flags, values, optional = _getopt(card.short_options)
    short_values, long_values = _value_options(card.paths)
    short_values += values
    known = _card_long(card)
    return [argv[0], *_rewrite(argv[1:], known, short_values, long_values, flags, optional)]
