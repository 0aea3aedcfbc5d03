"""The registry of cards: one card per name, what a card says is what the analysis does, and
a program without a card is read as it always was (fail closed)."""

from __future__ import annotations

import pytest

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.touches import SHAPES, UNKNOWN
from guard._policy.bash.programs import CARDS, card_for, global_options_of, paths_of, touched
from guard._policy.bash.walker import analyze
from guard._policy.matching.rules import GLOBAL_VALUE_OPTIONS


def test_no_two_cards_name_the_same_program() -> None:
    names = [name for card in CARDS for name in card.names]
    assert len(names) == len(set(names))
    assert all(card_for(name) is card for card in CARDS for name in card.names)


def test_a_program_with_a_card_has_no_row_left_in_the_older_tables() -> None:
    carded = {name for card in CARDS for name in card.names}
    assert carded.isdisjoint(SHAPES)


def test_the_options_before_a_subcommand_are_the_cards_and_only_theirs() -> None:
    assert global_options_of() == GLOBAL_VALUE_OPTIONS
    assert all(card_for(name) is not None for name in GLOBAL_VALUE_OPTIONS)


@pytest.mark.parametrize("program", ["frobnicate", "./run.sh", "gitx", "Git", ""])
def test_a_program_without_a_card_is_read_as_unknown(program: str) -> None:
    assert card_for(program) is None
    assert paths_of(program) is UNKNOWN
    command = Command((Word.literal(program), Word.literal("a.txt")), "/w")
    assert [(w.value, u.read, u.write) for w, u in touched(command)] == [("a.txt", True, True)]


def test_a_card_is_found_by_the_basename_of_the_command_word() -> None:
    for spelling in ("git", "/usr/bin/git", "./git", "/opt/bin//git"):
        [command] = analyze(f"{spelling} clean -fd", cwd="/w").commands
        assert card_for(command.program) is card_for("git") is not None, spelling


def test_a_program_without_a_card_has_no_card_even_when_a_card_names_it_inside() -> None:
    assert card_for(None) is None
    assert card_for("git-clean") is None
