"""The one registry of cards: a program's name (or an alias) to what the guard knows of it.

``card_for`` finds a program's card; ``paths_of`` the shape its words are read through
(``touched``), ``global_options_of`` the options before its subcommand. A program without a
card keeps the rows the older tables hold for it (``operands/touches.SHAPES``,
``running/programs``), and without those is read fail-closed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import SHAPES, UNKNOWN, Shape, read_paths
from guard._policy.bash.programs.archives import EXTRACTORS, GTAR, TAR, ZIP
from guard._policy.bash.programs.awk import AWK, BUSYBOX_AWK, MAWK
from guard._policy.bash.programs.builtins import (
    ECHO,
    INERT,
    PERL,
    PRINTF,
    READS_NAMED,
    SHELL_STATE,
    SOURCE,
)
from guard._policy.bash.programs.card import Card
from guard._policy.bash.programs.clouds import AWS, GCLOUD, PI_GUARD
from guard._policy.bash.programs.containers import DOCKER, HELM, KUBECTL, NERDCTL, OC, PODMAN
from guard._policy.bash.programs.copy import CP, DITTO, INSTALL, LINK, LN, MV, RSYNC, SCP
from guard._policy.bash.programs.dd import CARD as DD
from guard._policy.bash.programs.deleters import RM, SHRED, SRM, TRASH, TRUNCATE, UNLINK
from guard._policy.bash.programs.downloaders import CURL, WGET
from guard._policy.bash.programs.editors import EMACS, NVIM, VIM
from guard._policy.bash.programs.find import CARD as FIND
from guard._policy.bash.programs.git import CARD as GIT
from guard._policy.bash.programs.interpreters import DENO, LUA, NODE, NODEJS, PHP, RUBY
from guard._policy.bash.programs.languages import OTHERS, POWERSHELL, SCRIPTS
from guard._policy.bash.programs.launchers import GDB, LESS, MAN, SORT, SPLIT
from guard._policy.bash.programs.make import GMAKE, MAKE
from guard._policy.bash.programs.packages import APT, CONDA, NPM, PIP, PNPM, YARN
from guard._policy.bash.programs.readers import READERS
from guard._policy.bash.programs.search import AG, EGREP, GREP, RG
from guard._policy.bash.programs.sed import GSED, SED
from guard._policy.bash.programs.spelling import full_spelling
from guard._policy.bash.programs.sql import CLIENTS, READING_CLIENTS
from guard._policy.bash.programs.wrappers import APPLETS, ASKING, ENV, RUNNERS, UNWRAPPED, XARGS
from guard._policy.bash.programs.writers import MKDIR, MODES, TEE, TOUCH

__all__ = ["CARDS", "card_for", "global_options_of", "paths_of", "spelled", "touched"]

CARDS: tuple[Card, ...] = (
    *(GIT, FIND, SED, GSED, MAKE, GMAKE, DD, CURL, WGET),
    *(RM, SRM, UNLINK, TRUNCATE, SHRED, TRASH),
    *(MV, CP, LN, LINK, INSTALL, RSYNC, SCP, DITTO),
    *(TAR, GTAR, ZIP, EXTRACTORS),
    *(AWK, MAWK, BUSYBOX_AWK, READING_CLIENTS, CLIENTS),
    *(GREP, EGREP, RG, AG, TEE, TOUCH, MKDIR, MODES),
    *(NPM, PNPM, YARN, PIP, APT, CONDA),
    *(DOCKER, PODMAN, NERDCTL, KUBECTL, OC, HELM, AWS, GCLOUD, PI_GUARD),
    *(VIM, NVIM, EMACS, *SCRIPTS, POWERSHELL, *OTHERS),
    *(GDB, SORT, SPLIT, MAN, LESS, READERS),
    *(*UNWRAPPED, *ASKING, *RUNNERS, ENV, XARGS, APPLETS),
    *(INERT, SHELL_STATE, ECHO, PRINTF, READS_NAMED, SOURCE, PERL),
    *(NODE, NODEJS, DENO, RUBY, PHP, LUA),
)
"""Every card; no two name the same program."""


def _by_name(cards: Iterable[Card]) -> dict[str, Card]:
    table: dict[str, Card] = {}
    for card in cards:
        for name in sorted(card.names):
            if name in table:
                raise ValueError(f"two cards name the program {name!r}")
            table[name] = card
    return table


_BY_NAME: Mapping[str, Card] = _by_name(CARDS)


def card_for(program: str | None) -> Card | None:
    """The card of ``program`` (a command word's basename), ``None`` when it has none."""
    return None if program is None else _BY_NAME.get(program)


def spelled(argv: Sequence[Word]) -> list[Word]:
    """``argv`` as the program reads it: long options in full, clusters split, ``git-NAME``
    as ``git NAME`` (``spelling.full_spelling``)."""
    return full_spelling(argv, _BY_NAME)


def paths_of(program: str | None) -> Shape:
    """How the words of ``program`` name paths: its card's shape, else its row, else unknown."""
    card = card_for(program)
    if card is not None:
        return card.paths or UNKNOWN
    return SHAPES.get(program or "", UNKNOWN)


def global_options_of() -> dict[str, frozenset[str]]:
    """Per program with a card that says them: the options taking a value before its
    subcommand."""
    return {name: card.global_options for name, card in _BY_NAME.items() if card.global_options}


def touched(command: Command) -> list[tuple[Word, Use]]:
    """Every word of ``command`` that names a path, with how the command uses it, in order."""
    return read_paths(command, paths_of(command.program))
