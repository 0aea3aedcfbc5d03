"""The shape of a card: what the guard knows about one program (or a family of programs).

A card says what a program runs that the command does not show (``runs``: findings, nested
scripts, the command it runs in turn; ``code_options``: options that carry code), which of
its words name paths and how it uses each (``paths``: read, written, destroyed,
recursively), which options may come before its subcommand (``global_options``, so a
rule's ``subcommand`` finds ``git -C dir reset``), what the built-in checks need to know
of it (``catastrophic``, ``creates_links``, ``runs_files``, ``writes_content``), and how
its options are spelled (``long_options``, ``abbreviates``, ``short_options``,
``subcommand_options``, ``subcommands``: ``spelling`` reads them), and for a wrapper how
it finds the command it runs (``wraps``). A program without a
card is read as it always was: fail closed, every operand read and written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from guard._policy.bash.model import Command
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker

__all__ = ["Card", "Runs", "Wraps", "per_subcommand", "words"]


def words(text: str) -> frozenset[str]:
    """The words of ``text``, as a set: how a card writes its names and options."""
    return frozenset(text.split())


def per_subcommand(table: Mapping[str, str]) -> Mapping[str, frozenset[str]]:
    """A subcommand's options, written as text per subcommand: a card's ``subcommand_options``."""
    return MappingProxyType({sub: words(text) for sub, text in table.items()})


Runs = Callable[[SyntaxWalker, Command], None]
"""Looks at one command of the program: findings for what it runs, nested code walked."""


@dataclass(frozen=True, slots=True)
class Wraps:
    """How a wrapper finds the command it runs (``running/wrappers`` follows it).

    ``how``: ``unwraps`` (every option known, the command after them judged as if alone; an
    option not listed asks), ``asks`` (it asks; what it runs is looked at too), ``subcommand``
    (only after one of ``subcommands``: ``uv run``), ``env``, ``xargs``, ``applet``
    (``busybox``: the first word is the program).
    """

    how: Literal["unwraps", "asks", "subcommand", "env", "xargs", "applet"]
    short_values: str = ""
    """Short options that take a value."""
    long_values: frozenset[str] = frozenset()
    """Long options that take a value as the next word (``--opt=value`` always does)."""
    short_flags: str = ""
    """Short options that take none (``unwraps``, ``env``: any other asks)."""
    long_flags: frozenset[str] = frozenset()
    """Long options that take none."""
    leading: tuple[int, ...] = (0,)
    """How many words may come before the command (a user, a root, a host); each reading
    is looked at (``asks``)."""
    command_optional: bool = False
    """Without a command it is no wrapper (``ssh-agent -s``, ``tmux ls``)."""
    subcommands: tuple[str, ...] = ()
    """The subcommands that run a command (``subcommand``)."""


@dataclass(frozen=True, slots=True)
class Card:
    """What the guard knows about the programs ``names`` (see the module docstring)."""

    names: frozenset[str]
    """The program's names: the basename of the command word (``git``, ``/usr/bin/git``)."""
    paths: Shape | None = None
    """Which words name paths and how each is used; ``None``: every operand read and written."""
    runs: Runs | None = None
    """What the program runs or writes that its words do not name; ``None``: nothing."""
    code_options: frozenset[str] = frozenset()
    """Options whose value (or presence) is code or a program it runs (``rsync -e``): asks."""
    code_prefixes: tuple[str, ...] = ()
    """A word starting with one of these is code it runs (``vim +CMD``): asks."""
    global_options: frozenset[str] = frozenset()
    """Options taking a value that may come before the subcommand (``git -C DIR reset``)."""
    catastrophic: bool = False
    """A recursive change it makes of ``/``, the home or a top-level directory is blocked
    (``builtin.catastrophic-target``)."""
    catastrophic_flags: tuple[str, ...] = ()
    """Flags that make it a change of ``/`` whatever it names (``rm --no-preserve-root``)."""
    creates_links: tuple[str, ...] | None = None
    """It creates links: always (``()``) or with one of these flags (``cp -s``); ``None``:
    never. A path used after a link in the same call asks (``builtin.link-then-use``)."""
    runs_files: bool = False
    """A file it reads may be code it runs (``sed -f``, a makefile): written earlier in the
    same call, that asks (``builtin.inline-code``)."""
    writes_content: bool = True
    """What it writes is content (not only a mode, an owner, a time or a new directory)."""
    long_options: frozenset[str] = frozenset()
    """Long options the guard reacts to (the built-in rules' flags) that its other fields do
    not name: an abbreviation of one (``--recur``) is read as it (``spelling``). Those the
    other fields name (``code_options``, the shape's recursive flags …) are read so too."""
    abbreviates: bool = False
    """It takes any unambiguous prefix of a long option (GNU ``getopt_long``, git's
    parse-options): a rule's own long flags on it match their abbreviations too."""
    short_options: str = ""
    """Its short options as getopt writes them (``t:`` takes a value, ``i::`` an attached one
    only), from its manual: a cluster of them is split (``mv -ft D`` as ``-f -t D``). Empty:
    clusters are read as typed."""
    subcommand_options: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Per subcommand, more long options the guard reacts to (``git reset --hard``); with
    any, only the words after the subcommand are respelled."""
    subcommands: frozenset[str] = frozenset()
    """Its subcommands that also run as a program of their own (``git-reset``)."""
    wraps: Wraps | None = None
    """It runs another command, found so (``sudo``, ``env``, ``uv run``); ``None``: it is no
    wrapper."""
    inline_code: frozenset[str] = frozenset()
    """An interpreter's options whose value is code it runs (``node -e``, ``perl -e``): the
    walk reads that code (``running/interpreters``)."""
