"""Reading a program's arguments: flags, option values and operands, as getopt would.

Short options bundle (``-rf``), a short option's value may be attached (``-oFILE``), long
options take ``--name=value`` or ``--name value``; after ``--`` everything is an operand.
Which options take a value is the caller's knowledge (``touches.SHAPES``).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Word

__all__ = ["bundled_values", "has_flag", "option_value", "split_args"]


def split_args(
    args: Sequence[Word], short_value: str = "", long_value: frozenset[str] = frozenset()
) -> tuple[list[Word], list[Word], list[Word]]:
    """(flags, option values, positionals); after ``--`` everything is positional."""
    flags: list[Word] = []
    values: list[Word] = []
    positionals: list[Word] = []
    i = 0
    only_positional = False
    while i < len(args):
        word = args[i]
        value = word.value
        if only_positional or value is None or value == "-" or not value.startswith("-"):
            positionals.append(word)
            i += 1
            continue
        if value == "--":
            only_positional = True
            i += 1
            continue
        flags.append(word)
        if value.startswith("--"):
            if "=" in value:
                values.append(Word(value.split("=", 1)[1], word.raw))
            elif value in long_value and i + 1 < len(args):
                values.append(args[i + 1])
                i += 1
            i += 1
            continue
        letters = value[1:]
        for j, ch in enumerate(letters):
            if ch in short_value:
                if j < len(letters) - 1:
                    values.append(Word(letters[j + 1 :], word.raw))
                elif i + 1 < len(args):
                    values.append(args[i + 1])
                    i += 1
                break
        i += 1
    return flags, values, positionals


def has_flag(flags: Sequence[Word], *names: str) -> bool:
    """Whether one of ``names`` (``-r`` may be bundled as ``-rf``; ``--x`` or ``--x=v``) is set."""
    for word in flags:
        value = word.value
        if value is None:
            continue
        for name in names:
            if len(name) == 2 and name[0] == "-" and name[1] != "-":
                if not value.startswith("--") and name[1] in value[1:]:
                    return True
            elif value == name or value.startswith(name + "="):
                return True
    return False


def option_value(args: Sequence[Word], *names: str) -> list[Word]:
    """Values given to options ``names`` (``-o X``, ``-oX``, ``--output=X``, ``--output X``)."""
    out: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value is None:
            continue
        for name in names:
            if value == name and i + 1 < len(args):
                out.append(args[i + 1])
            elif name.startswith("--") and value.startswith(name + "="):
                out.append(Word(value.split("=", 1)[1], word.raw))
            elif (
                len(name) == 2
                and not name.startswith("--")
                and value.startswith(name)
                and (len(value) > 2 and not value.startswith("--"))
            ):
                out.append(Word(value[2:], word.raw))
    return out


def bundled_values(args: Sequence[Word], letter: str, value_letters: str) -> list[Word]:
    """Values of the short option ``letter`` also inside bundles (``curl -so FILE``)."""
    out: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value is None or not value.startswith("-") or value.startswith("--"):
            continue
        for j, ch in enumerate(value[1:], start=1):
            if ch in value_letters:
                if ch == letter:
                    rest = value[j + 1 :]
                    if rest:
                        out.append(Word(rest, word.raw))
                    elif i + 1 < len(args):
                        out.append(args[i + 1])
                break
    return out
