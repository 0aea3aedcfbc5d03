"""Reading the code a program carries in its words: option values, positionals, inline code.

Shared by the cards and by the programs without one (``running/programs``): the values of
``-e CODE``/``--execute=CODE``/``-eCODE``, the operands once option values are skipped,
inline code handed to the walk's allowlist, and script files read from a stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.parsing.syntax import SyntaxWalker

__all__ = ["inline", "option_values", "positionals", "script_files"]


def positionals(args: Sequence[Word], value_options: frozenset[str]) -> list[Word]:
    """The words that are no option, skipping the value of each option in ``value_options``."""
    out: list[Word] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        value = word.value
        if value is not None and value.startswith("-") and value != "-":
            skip = value in value_options
            continue
        out.append(word)
    return out


def option_values(args: Sequence[Word], names: frozenset[str]) -> list[Word]:
    """Values of the options ``names``: ``-e X``, ``--execute=X``, ``-eX``."""
    out: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value is None:
            continue
        if value in names:
            out.append(args[i + 1] if i + 1 < len(args) else Word(None, ""))
        elif "=" in value and value.split("=", 1)[0] in names:
            out.append(Word(value.split("=", 1)[1], word.raw))
        else:
            for name in names:
                if len(name) == 2 and value.startswith(name) and not value.startswith("--"):
                    out.append(Word(value[2:], word.raw))
                    break
    return out


def inline(w: SyntaxWalker, command: Command, words: Sequence[Word], language: str) -> None:
    """Hand each word's code to the walk's allowlist; code built at runtime asks."""
    for word in words:
        if word.value is None:
            w.finding("dynamic-script", f"{language} code built at runtime: {word.raw}")
        else:
            w.code(command, word.value, language)


def script_files(w: SyntaxWalker, program: str, files: Sequence[Word]) -> None:
    """A program file read from stdin, a stream or a word only known at runtime asks."""
    for word in files:
        if word.value is None or word.value == "-" or word.value.startswith(("/dev/", "/proc/")):
            w.finding("shell-stdin", f"{program} reads its program from a stream: {word.raw}")
